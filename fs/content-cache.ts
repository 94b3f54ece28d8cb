/**
 * @module File bytes recently read or saved through any mount, by the sha-256 of the text. The bytes
 * of a sha never change, so an entry is right for as long as it lives and needs no invalidation: a
 * reader asks for the sha the (exactly fresh) storage view names, and one text shared by many
 * versions or files (a revert, a copy, a fork) is one entry. A miss reads the text from `contents`
 * through a reader thread. The mount drops the kernel's page cache on
 * every open (freshness), so without this each `cat` of an unchanged file went back to SQLite.
 * Bounded in bytes, least recently used out first. Entries are copies, and a reader that gets one
 * must not change it: a draft made from one copies it before its first change (handles.ts).
 */
export class ContentCache {
  /** Insertion order is recency: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The text's bytes (shared: never change them), or undefined. */
  get(sha256: string): Buffer | undefined {
    const hit = this.entries.get(sha256);
    if (!hit) return undefined;
    this.entries.delete(sha256);
    this.entries.set(sha256, hit);
    return hit;
  }

  /** Drops the text (its last version was redacted: its bytes leave every place mnemo keeps them). */
  forget(sha256: string): void {
    const gone = this.entries.get(sha256);
    if (!gone) return;
    this.entries.delete(sha256);
    this.bytes -= gone.length;
    // Not zeroed: a draft of a file still open since that text was current may share the buffer.
  }

  /** Drops every text (redactions elsewhere may have gone unheard: PostgreSQL's listener reconnected). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** Keeps a copy of `bytes` as the text whose sha-256 is `sha256`. */
  put(sha256: string, bytes: Buffer): void {
    if (bytes.length > this.maxBytes / 8 || this.entries.has(sha256)) return;
    this.entries.set(sha256, Buffer.from(bytes));
    this.bytes += bytes.length;
    for (const [id, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= old.length;
    }
  }
}

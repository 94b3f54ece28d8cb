/**
 * @module File bytes recently read or saved through any mount, by version id. Versions never
 * change, so an entry is right for as long as it lives and needs no invalidation: a reader asks for
 * the version the (exactly fresh) storage view names. The mount drops the kernel's page cache on
 * every open (freshness), so without this each `cat` of an unchanged file went back to SQLite.
 * Bounded in bytes, least recently used out first. Entries are copies, and a reader that gets one
 * must not change it: a draft made from one copies it before its first change (handles.ts).
 */
export class ContentCache {
  /** Insertion order is recency: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The version's bytes (shared: never change them), or undefined. */
  get(versionId: string): Buffer | undefined {
    const hit = this.entries.get(versionId);
    if (!hit) return undefined;
    this.entries.delete(versionId);
    this.entries.set(versionId, hit);
    return hit;
  }

  /** Keeps a copy of `bytes` as the content of `versionId`. */
  put(versionId: string, bytes: Buffer): void {
    if (bytes.length > this.maxBytes / 8 || this.entries.has(versionId)) return;
    this.entries.set(versionId, Buffer.from(bytes));
    this.bytes += bytes.length;
    for (const [id, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= old.length;
    }
  }
}

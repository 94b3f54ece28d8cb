/**
 * @module The mount's read model: what a live mount asks on every file operation (stat, readdir,
 * read), cheap by path, and the marks that tell it when its kept answers went stale.
 */
import type { MemoryMeta } from '../../domain/types.js';

export interface DirectoryListing {
  files: MemoryMeta[];
  /** Names of subdirectories implied by deeper memory paths. */
  dirs: string[];
  /** Set when a `limit` cut the listing short: it does not name everything in the directory. */
  truncated?: boolean;
}

/**
 * A directory's entries as a readdir lists them, and nothing else a readdir does not need (a
 * 20,000-entry DirectoryListing is about 8 MB of metadata to hand over).
 */
export interface DirectoryNames {
  /** Each entry's name once, in UTF-16 code unit order (Array.prototype.sort's): the order readdir gives them. */
  names: string[];
  /** One per name: 1 a memory, 2 an implied subdirectory, 3 both (a paged read that crossed a write turning one into the other). */
  kinds: Uint8Array;
}

export interface MountViewStorage {
  getMemoryMetaByPath(storeId: string, path: string): Promise<MemoryMeta | null>;
  /**
   * The live memory `id` without its content, or null: what getMemory finds, less the text (a save
   * that only compares the stored sha reads no content: fs/save-points.ts).
   */
  getMemoryMetaById(storeId: string, id: string): Promise<MemoryMeta | null>;
  /** The memory at `path` with its content as UTF-8 bytes (what a file read serves), or null. */
  getMemoryBytesByPath(storeId: string, path: string): Promise<(MemoryMeta & { bytes: Buffer }) | null>;
  /** Direct children of a directory ("/" or "/a/b"), for the mount's readdir; at most `limit` entries if given. */
  listDirectory(storeId: string, dir: string, limit?: number): Promise<DirectoryListing>;
  /**
   * The names of a directory's direct children, for a readdir that does not keep its listing (a big
   * directory): the same entries `listDirectory` gives, sorted, each with its kind. Given
   * `listingUpTo`, a directory of at most that many entries is answered with its `listDirectory`
   * listing instead, so a reader that keeps small listings and not big ones asks once. Like
   * `listDirectory`, a walk that grows with the directory: the SQLite adapter runs a big one on a
   * reader thread (names alone, asked for a directory known to be big, always), the PostgreSQL
   * adapter in pages.
   */
  listDirectoryNames(storeId: string, dir: string, listingUpTo?: number): Promise<DirectoryNames | DirectoryListing>;
  /** True if some memory lives strictly below `dir`: the directory is implied. */
  hasMemoriesUnder(storeId: string, dir: string): Promise<boolean>;
  /**
   * A number that changes after any committed write (at once for this process's writes, within
   * 100 ms for another process's): readers that keep answers (the mount) drop them when it moves.
   * Cheap enough to ask on every file operation.
   */
  changeMark(): number;
  /**
   * A mark of one store's changes, where the engine can tell stores apart (PostgreSQL: other
   * servers' notices name their store); it moves whenever changeMark() does for a change that may
   * touch the store, and its own-write part is ownWriteMark(). Absent: changeMark() serves.
   */
  storeChangeMark?(storeId: string): number;
  /**
   * The part of changeMark() that counts this process's own writes, with no look at other
   * processes: when both moved by the same amount around a write of one's own, that write is all
   * that changed (the mount keeps its answers across its own saves this way: fs/storage-view.ts).
   */
  ownWriteMark(): number;
  /**
   * How many writes this process has made: each call of the port that wrote (a write method, an
   * `atomic`, a write made on another connection) counts once, however many rows it changed. A
   * write that moves ownWriteMark() may be anyone's in the process (an API request, another mount);
   * when this count moved by exactly one across a write of one's own, that write was the only one
   * meanwhile (fs/storage-view.ts `saved`). A call that wrote and then failed may count too.
   */
  ownWriteCount(): number;
  /**
   * Calls `listener` synchronously each time changeMark() (or a storeChangeMark) may have moved: at
   * each write of this process, as it is made; at another process's commit when the mark notices it
   * (SQLite: when changeMark() is asked, at most every 100 ms; PostgreSQL: at its notice). For a
   * reader that keeps answers where it cannot ask the mark first (the binding's kept stats:
   * fs/kernel-stats.ts). Returns the unsubscribe.
   */
  onMarkMoved?(listener: () => void): () => void;
  /** The earliest `expires_at` in the store after `after`, or null: live rows can vanish then without a write. */
  nextExpiry(storeId: string, after: string): Promise<string | null>;
}

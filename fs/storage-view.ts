/**
 * @module One mount's memo of storage answers: memory metadata by path, "is anything below this
 * directory", and directory listings. A stat, an `ls -R` or a `grep -r` asks the same questions
 * many times; asking SQLite each time was most of a stat's cost. The answers are dropped the moment
 * the store's reader reports a change (changeMark: at once for the server's own writes, within 100 ms
 * for another process's) or a memory of the store reaches its expiry, so an API write shows in the
 * very next operation that reaches the mount, just as if every operation had queried SQLite.
 *
 * The reader answers with promises; a question the view can answer from memory is answered
 * synchronously (a value, not a promise), so a hit costs what it did before. An answer read while
 * storage changed (or the view was dropped) is returned but not kept.
 */
import type { Answer } from './answer.js';
import type { FuseStat } from './binding/fuse.js';
import { KernelStats } from './kernel-stats.js';
import { baseName, parentOf, type DirectoryListing, type DirectoryNames, type Memory, type MemoryMeta, type MountReader, type Store } from '../src/index.js';

/**
 * Past this many remembered paths (or listed entries), start over: a walk over a huge store must
 * not grow without bound. About 300 bytes each, so a few MiB per mount at most.
 */
const MAX_ENTRIES = 20_000;
/**
 * After this many lookups missed in one directory since the last change, the directory is listed
 * once and answers the rest (a walk: stat, ls -l, grep -r), unless it holds more than
 * PREFETCH_MAX_ENTRIES. A lone lookup after each write stays one indexed query.
 */
const PREFETCH_AFTER_MISSES = 8;
const PREFETCH_MAX_ENTRIES = 4096;
/** Big directories remembered across changes (`bigDirs`): past this many, start over. */
const MAX_BIG_DIRS = 1024;

interface Listing extends DirectoryListing {
  byName: Map<string, MemoryMeta>;
  dirSet: Set<string>;
}

export class StorageView {
  private mark = -1;
  /** RFC 3339 time of the store's next expiry after the answers were read; null: none pending; undefined: still being asked. */
  private until: string | null | undefined = null;
  /** Moves whenever the answers are dropped: an answer asked for before must not be kept after. */
  private epoch = 0;
  private readonly metas = new Map<string, MemoryMeta | null>();
  private readonly under = new Map<string, boolean>();
  private readonly listings = new Map<string, Listing>();
  private storeRow: Store | null | undefined;
  /** Entries held by the kept listings. */
  private listed = 0;
  /** Finished stat answers for stored files (see `stat`). */
  private readonly stats = new Map<string, FuseStat>();
  /** Lookups that missed, per directory, since the last change (-1: too big to list). */
  private readonly misses = new Map<string, number>();
  /**
   * Directories last found to hold more than PREFETCH_MAX_ENTRIES entries. Unlike `misses`, kept
   * across changes: a write rarely makes a big directory small, and without this the first readdir
   * after every write read its first 1,024 rows on the serving thread only to learn it was big again.
   * Only the shape of the question depends on it (names alone), never the answer, so a stale entry
   * costs one readdir that is not kept.
   */
  private readonly bigDirs = new Set<string>();
  /** Stored files this mount shows elsewhere for now (set-aside.ts): no memory at these paths here. */
  private readonly hidden = new Set<string>();

  /**
   * `kernel`: the binding's copy of the kept stats (kernel-stats.ts), told of every stat kept or
   * forgotten here, of every drop, and of whether expiries are pending.
   */
  constructor(
    private readonly reader: MountReader,
    private readonly clock: () => string,
    private readonly kernel: KernelStats = new KernelStats(false),
  ) {}

  /** The mounted store's row (null once deleted): writes check it for archiving on every operation. */
  store(): Answer<Store | null> {
    this.current();
    if (this.storeRow !== undefined) return this.storeRow;
    const epoch = this.epoch;
    return this.reader.store().then((row) => {
      if (epoch === this.epoch) this.storeRow = row;
      return row;
    });
  }

  /**
   * The stat last computed for a stored file at `path`, if storage has not changed since. Only the
   * caller knows what else a stat depends on (open drafts, touched times): it checks drafts first and calls `forgetStat` when it touches a file. A stat served from here does
   * no other work, which brought a cached stat's cost in the serving process close to a `Map` read.
   */
  stat(path: string): FuseStat | undefined {
    this.current();
    if (this.hidden.size > 0 && this.hidden.has(path)) return undefined;
    const st = this.stats.get(path);
    // Asked here, so the binding did not answer it: its copy was of an older generation (or none).
    if (st) this.kernel.keep(path, st);
    return st;
  }

  keepStat(path: string, st: FuseStat): void {
    if (this.hidden.size > 0 && this.hidden.has(path)) return;
    this.remember(this.stats, path, st);
    this.kernel.keep(path, st);
  }

  forgetStat(path: string): void {
    // The binding answers only stats kept here (every other drop moved its generation): none to forget otherwise.
    if (this.stats.delete(path)) this.kernel.forget(path);
  }

  /** Whether a stat of `path` is kept (whether or not storage changed since). */
  keepsStat(path: string): boolean {
    return this.stats.has(path);
  }

  /**
   * The memory at `path` is shown elsewhere by this mount until `unhide` (set-aside.ts): `meta` and
   * `stat` find nothing there and listings leave it out, and the binding stops answering its stat.
   */
  hide(path: string): void {
    this.hidden.add(path);
    this.forgetStat(path);
  }

  unhide(path: string): void {
    this.hidden.delete(path);
  }

  /** The live memory's metadata at `path`, or null. */
  meta(path: string): Answer<MemoryMeta | null> {
    this.current();
    if (this.hidden.size > 0 && this.hidden.has(path)) return null;
    const known = this.metas.get(path);
    if (known !== undefined) return known;
    // A listed directory names every file in it: a name it lacks is no memory.
    const listing = this.listings.get(parentOf(path));
    if (listing) {
      const meta = listing.byName.get(baseName(path)) ?? null;
      this.remember(this.metas, path, meta);
      return meta;
    }
    return this.askMeta(path);
  }

  private async askMeta(path: string): Promise<MemoryMeta | null> {
    const epoch = this.epoch;
    const listing = await this.prefetch(parentOf(path));
    const meta = listing ? (listing.byName.get(baseName(path)) ?? null) : await this.reader.meta(path);
    if (epoch === this.epoch) this.remember(this.metas, path, meta);
    return meta;
  }

  /** True if some live memory lives strictly below `dir`. */
  hasMemoriesUnder(dir: string): Answer<boolean> {
    this.current();
    const known = this.under.get(dir);
    if (known !== undefined) return known;
    const listing = this.listings.get(dir);
    // A kept listing of the parent names every subdirectory there: a new file's name is none (a save's lookups).
    const parent = listing || dir === '/' ? undefined : this.listings.get(parentOf(dir));
    if (!listing && !parent) {
      const epoch = this.epoch;
      return this.reader.hasMemoriesUnder(dir).then((any) => {
        if (epoch === this.epoch) this.remember(this.under, dir, any);
        return any;
      });
    }
    const any = listing ? listing.files.length > 0 || listing.dirs.length > 0 : parent!.dirSet.has(baseName(dir));
    this.remember(this.under, dir, any);
    return any;
  }

  /** The memories and implied subdirectories directly in `dir`. Callers must not change it. */
  listDirectory(dir: string): Answer<DirectoryListing> {
    this.current();
    const known = this.listings.get(dir);
    if (known) return this.withoutHidden(known);
    const epoch = this.epoch;
    return this.reader.listDirectory(dir).then((listing) =>
      // A huge directory is listed for this readdir and not kept: it would crowd out everything else.
      this.withoutHidden(listing.files.length + listing.dirs.length > PREFETCH_MAX_ENTRIES ? listing : this.keep(dir, listing, epoch)),
    );
  }

  /**
   * What a readdir of `dir` lists: its listing, kept as `listDirectory` keeps it, or for a directory
   * of more than PREFETCH_MAX_ENTRIES entries (a listing not kept) its names alone, sorted as readdir
   * gives them, read for this readdir. Every entry's metadata copied back and 20,000 names sorted
   * here cost the serving thread (so every mount and request) 49 ms of CPU a listing; names alone,
   * sorted on a reader thread, 9 ms (README, big directories).
   */
  readdir(dir: string): Answer<DirectoryListing | DirectoryNames> {
    this.current();
    const known = this.listings.get(dir);
    if (known) return this.withoutHidden(known);
    if (!this.reader.listDirectoryNames) return this.listDirectory(dir);
    const epoch = this.epoch;
    // Known to be big (since the last change, or when last listed): names alone, with no look first
    // at whether it is small.
    const big = this.misses.get(dir) === -1 || this.bigDirs.has(dir);
    return this.reader.listDirectoryNames(dir, big ? undefined : PREFETCH_MAX_ENTRIES).then((answer) => {
      if (!('names' in answer)) {
        this.bigDirs.delete(dir);
        return this.withoutHidden(this.keep(dir, answer, epoch));
      }
      if (answer.names.length > PREFETCH_MAX_ENTRIES) {
        // Too big to list for its lookups too, as `listSmall` would find: they stay point queries.
        if (epoch === this.epoch) this.misses.set(dir, -1);
        if (this.bigDirs.size >= MAX_BIG_DIRS) this.bigDirs.clear();
        this.bigDirs.add(dir);
      } else {
        // Small again (asked as big): the next readdir lists it, and keeps it.
        this.bigDirs.delete(dir);
      }
      return this.namesWithoutHidden(dir, answer);
    });
  }

  private namesWithoutHidden(dir: string, listing: DirectoryNames): DirectoryNames {
    if (this.hidden.size === 0) return listing;
    const here = new Set<string>();
    for (const p of this.hidden) if (parentOf(p) === dir) here.add(baseName(p));
    if (here.size === 0) return listing;
    const names: string[] = [];
    const kinds: number[] = [];
    listing.names.forEach((name, i) => {
      // A hidden file's name stays if it is a subdirectory's too.
      const kind = here.has(name) ? listing.kinds[i]! & ~1 : listing.kinds[i]!;
      if (kind === 0) return;
      names.push(name);
      kinds.push(kind);
    });
    return { names, kinds: Uint8Array.from(kinds) };
  }

  private withoutHidden(listing: DirectoryListing): DirectoryListing {
    if (this.hidden.size === 0 || !listing.files.some((f) => this.hidden.has(f.path))) return listing;
    return { ...listing, files: listing.files.filter((f) => !this.hidden.has(f.path)) };
  }

  /**
   * The names of the subdirectories implied below `dir` (a directory's stat counts them), or null
   * for a directory of more than PREFETCH_MAX_ENTRIES entries: a stat must not list a huge one.
   */
  subdirs(dir: string): Answer<readonly string[] | null> {
    this.current();
    const kept = this.listings.get(dir);
    if (kept) return kept.dirs;
    if (this.misses.get(dir) === -1) return null;
    return this.listSmall(dir).then((listing) => listing?.dirs ?? null);
  }

  /**
   * Runs `save`, this mount's write of the one file at `path`, and keeps every answer across it,
   * updated with the memory it returns, when that write is all that changed storage meanwhile and
   * the memory is at `path`. Otherwise, as after any write, the next question drops them all.
   * Without this, each save threw away the store row, the next-expiry time and the directory's
   * listing, and the next save's lookups asked SQLite again.
   *
   * "All that changed": no other process's write (the change mark moved only as far as this
   * process's own-write mark), and no other write of this process (its count of writes moved by
   * one, this save). The own-write mark alone is the whole process's: an API write or another
   * mount's save that landed while this save waited its turn for the store (behind another
   * transaction, or for the store's lock) moved it too, and was taken for part of this save.
   */
  async saved(path: string, save: () => Promise<Memory>): Promise<Memory> {
    this.current();
    const mark = this.mark;
    const epoch = this.epoch;
    const own = this.reader.ownWriteMark();
    const writes = this.reader.ownWriteCount();
    const m = await save();
    const after = this.reader.changeMark();
    const mine = this.reader.ownWriteCount() - writes === 1 && after - mark === this.reader.ownWriteMark() - own;
    // Kept only if nothing else dropped the answers meanwhile and the next expiry is known (it may be this memory's).
    if (epoch !== this.epoch || this.until === undefined || m.path !== path || !mine) return m;
    this.mark = after;
    this.kernel.valid();
    const meta: MemoryMeta = {
      id: m.id, storeId: m.storeId, path: m.path, contentSha256: m.contentSha256, contentSizeBytes: m.contentSizeBytes,
      versionId: m.versionId, mode: m.mode, createdAt: m.createdAt, updatedAt: m.updatedAt, expiresAt: m.expiresAt,
      atimeMs: m.atimeMs, mtimeMs: m.mtimeMs, ctimeMs: m.ctimeMs, uid: m.uid, gid: m.gid,
    };
    this.remember(this.metas, path, meta);
    this.forgetStat(path);
    // Every directory above now holds something; a kept listing gains the file or the subdirectory.
    for (let child = path, dir = parentOf(path); ; child = dir, dir = parentOf(dir)) {
      this.under.set(dir, true);
      const listing = this.listings.get(dir);
      if (listing) this.addToListing(listing, baseName(child), child === path ? meta : null);
      if (dir === '/') break;
    }
    if (m.expiresAt !== null && (this.until === null || m.expiresAt < this.until)) this.setUntil(m.expiresAt);
    return m;
  }

  private addToListing(listing: Listing, name: string, file: MemoryMeta | null): void {
    if (file === null) {
      if (listing.dirSet.has(name)) return;
      listing.dirs.push(name);
      listing.dirSet.add(name);
    } else {
      const at = listing.byName.has(name) ? listing.files.findIndex((f) => f.path === file.path) : -1;
      listing.byName.set(name, file);
      if (at >= 0) return void (listing.files[at] = file);
      listing.files.push(file);
    }
    this.listed += 1;
  }

  /** Lists `dir` once enough lookups there missed, if it is small enough; else null. */
  private async prefetch(dir: string): Promise<Listing | null> {
    const n = this.misses.get(dir) ?? 0;
    if (n < 0) return null;
    if (n + 1 < PREFETCH_AFTER_MISSES) {
      this.misses.set(dir, n + 1);
      return null;
    }
    return this.listSmall(dir);
  }

  /** Lists `dir` and keeps it, unless it holds more than PREFETCH_MAX_ENTRIES (then null, and remembered as too big). */
  private async listSmall(dir: string): Promise<Listing | null> {
    const epoch = this.epoch;
    const listing = await this.reader.listDirectory(dir, PREFETCH_MAX_ENTRIES);
    if (listing.truncated) {
      if (epoch === this.epoch) this.misses.set(dir, -1);
      return null;
    }
    return this.keep(dir, listing, epoch);
  }

  /** Keeps a listing read since `epoch` (a stale one is handed back, not kept). */
  private keep(dir: string, listing: DirectoryListing, epoch: number): Listing {
    const kept = { ...listing, byName: new Map(listing.files.map((f) => [baseName(f.path), f])), dirSet: new Set(listing.dirs) };
    if (epoch !== this.epoch) return kept;
    const entries = listing.files.length + listing.dirs.length;
    this.listed += entries;
    if (this.listed > MAX_ENTRIES) {
      this.listings.clear();
      this.listed = entries;
    }
    this.remember(this.listings, dir, kept);
    this.under.set(dir, listing.files.length > 0 || listing.dirs.length > 0);
    const prefix = dir === '/' ? '/' : dir + '/';
    for (const d of listing.dirs) this.under.set(prefix + d, true);
    return kept;
  }

  /**
   * Drops every answer now, as a move of the change mark would: a point-in-time mount's marks never
   * move, yet a redaction or a prune changes its past. Returns the ids of the memories whose files
   * it had answered for (their kernel entries may show what is gone).
   */
  drop(): string[] {
    const ids = new Set<string>();
    for (const meta of this.metas.values()) if (meta) ids.add(meta.id);
    for (const listing of this.listings.values()) for (const f of listing.files) ids.add(f.id);
    this.mark = -1;
    this.current();
    return [...ids];
  }

  /** Drops every answer if storage changed since they were read, or a memory may have expired. */
  private current(): void {
    const mark = this.reader.changeMark();
    if (mark === this.mark && (this.until == null || this.clock() < this.until)) return;
    this.epoch += 1;
    this.kernel.changed();
    this.kernel.valid();
    this.metas.clear();
    this.stats.clear();
    this.under.clear();
    this.listings.clear();
    this.listed = 0;
    this.storeRow = undefined;
    this.misses.clear();
    this.mark = mark;
    // Asked once per drop, without waiting: answers read meanwhile are read after the drop, and the
    // first check once the time is known drops them too if something expired since.
    this.setUntil(undefined);
    const epoch = this.epoch;
    this.reader.nextExpiry(this.clock()).then(
      (until) => {
        if (epoch === this.epoch) this.setUntil(until);
      },
      () => {
        // Unknown: drop everything at the next question and ask again.
        if (epoch === this.epoch) this.mark = -1;
      },
    );
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_ENTRIES) {
      map.clear();
      if (map === (this.stats as Map<string, unknown>)) {
        this.kernel.changed();
        this.kernel.valid();
      }
    }
    map.set(key, value);
  }

  /** The binding keeps stats only while no expiry is pending (one hides rows without a write) or unknown. */
  private setUntil(until: string | null | undefined): void {
    this.until = until;
    this.kernel.on(until === null);
  }
}

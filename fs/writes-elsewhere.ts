/**
 * @module Writes made elsewhere (the API, MCP, another session, another host): what the kernel must
 * forget of them. The kernel keeps a name's entry and a file's attributes for the entry and attribute
 * timeouts (fs/mounts.ts); this mount's own view of storage is fresh at once (storage-view.ts), but
 * until the kernel asks again a stat may show a deleted file, and a path walk may answer ENOTDIR
 * through a name that is now a directory. So each mount follows its store's versions as they commit
 * (the change feed's order: the store's commit numbers) and, for each one its own session did not
 * make, drops the kernel's entries that it changed:
 * - the file's entry wherever the kernel learnt it (by the memory's inode number: a moved memory's
 *   old name is not in its version), for a change or a delete of a memory the kernel may know;
 * - the entry at the version's path, when this mount showed a directory there (a directory turned
 *   into a file).
 * A directory whose last file left elsewhere stays in the kernel until its entry times out, as
 * before: dropping a directory's entry would show a shell whose working directory is in it
 * `(deleted)` until its next lookup.
 *
 * It reads when something else may have written, checked every LOOK_MS: this server's commit signal
 * names each write's store and writer (the mount's own session's saves do not count), and the part
 * of the store's change mark that this process's writes do not move says when another process or
 * host committed (on the cross-host notice, or within 100 ms for another process on the SQLite
 * file). While the mount's own saves are all that happen, nothing is read; versions of its own
 * session that a later read meets are skipped: the kernel saw them happen. Each such read also asks
 * for the store's row: a store deleted elsewhere empties the mount (`onStoreGone`).
 *
 * A point-in-time mount follows its store the same way, through the store's live reader, for what
 * changes the past: prunes (`onPruned`) and other processes' redactions (`onRedacted`); it has no
 * kernel entries of new versions to drop (`kernel` answers null).
 */
import { baseName, type Actor, type MemoryVersion, type MountReader, type MountService, type PrunedVersion } from '../src/index.js';
import type { DirTable } from './dirs.js';
import type { LiveMount } from './mounts.js';
import { inoOf } from './stat.js';

/** How often the change mark is looked at. */
export const LOOK_MS = 100;
/** Versions read per page. */
const PAGE = 500;
/** After a failed read, the next waits this long, doubling up to RETRY_MAX_MS (a database that is down is not asked 10 times a second). */
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;

export interface ElsewhereDeps {
  readonly reader: MountReader;
  readonly actor: Actor;
  /** This server's commits, with their stores and writers. */
  readonly onCommit: MountService['onCommit'];
  readonly dirs: Pick<DirTable, 'inoAt' | 'parentIno'>;
  /** The live mount's kernel cache control (null until mounted: nothing to drop yet). */
  readonly kernel: () => Pick<LiveMount, 'invalidateFile' | 'invalidateName'> | null;
  /** Told when a page cannot be read (it is read again at the next look). */
  readonly log: (line: string) => void;
  /**
   * Told, once, that the store was deleted elsewhere (another process on the SQLite file, another
   * host): this server's own deletions tell its mounts directly (Mounter.storeChanged), but a
   * `mnemo mount` beside the server, or a mount on another host, learns it only here.
   */
  readonly onStoreGone?: () => void;
  /**
   * Told of versions of the store that another process on the SQLite file redacted (its admin
   * log's entries, read when that process's commits move the change mark): what the mounts keep
   * of them goes, as this process's own redactions make it go (Mounter.versionRedacted). PostgreSQL
   * tells every server by notice instead (the reader has no redactionsAfter there).
   */
  readonly onRedacted?: (versionIds: string[]) => void;
  /** Told of versions of the store that retention pruned (by any process or host), as the change feed shows them. */
  readonly onPruned?: (pruned: PrunedVersion[]) => void;
  readonly lookMs?: number;
}

/** Starts following the store of `deps.reader`, a live reader; returns the stop. */
export function followWritesElsewhere(deps: ElsewhereDeps): () => void {
  const { reader, lookMs = LOOK_MS } = deps;
  let stopped = false;
  let busy = false;
  /** While reads fail: when the next may be tried, and the wait after it. */
  let retryAt = 0;
  let retryMs = 0;
  /** The last commit number handled; null until the start's is known. */
  let cursor: number | null = null;
  /** The admin log's last entry handled (reader.redactionsAfter); null until the start's is known. */
  let logged: number | null = null;
  /** Someone else committed in the store since the last read (this server's signal). */
  let pending = false;
  /** The part of the change mark moved by other processes and hosts, when last read. */
  const outsidePart = () => reader.changeMark() - reader.ownWriteMark();
  let outside = outsidePart();
  const unsubscribe = deps.onCommit((storeId, actor) => {
    if ((storeId === null || storeId === reader.storeId) && (actor === null || !sameActor(actor, deps.actor))) pending = true;
  });

  const look = async (): Promise<void> => {
    if (stopped || busy || Date.now() < retryAt) return;
    const now = outsidePart();
    if (!pending && now === outside && cursor !== null) return;
    busy = true;
    // Cleared before the read: a commit that lands while it runs is read next time.
    pending = false;
    // Only another process's commits can hold a redaction this process did not make (and tell).
    const elsewhere = now !== outside || logged === null;
    outside = now;
    try {
      if (cursor === null) cursor = await reader.lastChange();
      else cursor = await drain(deps, cursor, () => stopped);
      if (elsewhere && reader.redactionsAfter && deps.onRedacted) {
        const r = await reader.redactionsAfter(logged);
        if (logged !== null && r.versionIds.length > 0 && !stopped) deps.onRedacted(r.versionIds);
        logged = r.last;
      }
      // Something else committed: it may have been the store's deletion, which no version tells.
      if (deps.onStoreGone && !stopped && (await reader.store()) === null) {
        stopped = true;
        deps.onStoreGone();
      }
      if (retryMs > 0) deps.log("mnemo fs: reading the store's changes again; the kernel's names are refreshed as before");
      retryMs = 0;
    } catch (err) {
      // Storage unreachable (PostgreSQL down): read again later, whatever the marks; said once per outage.
      pending = true;
      if (retryMs === 0) deps.log(`mnemo fs: cannot read the store's changes to refresh the kernel's names (${err instanceof Error ? err.message : String(err)}); retrying`);
      retryMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, retryMs * 2));
      retryAt = Date.now() + retryMs;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), lookMs);
  timer.unref();
  void look();
  return () => {
    stopped = true;
    clearInterval(timer);
    unsubscribe();
  };
}

/** Reads the versions after `cursor` page by page and drops what each changed; returns the new cursor. */
async function drain(deps: ElsewhereDeps, cursor: number, stopped: () => boolean): Promise<number> {
  for (;;) {
    const page = await deps.reader.changesAfter(cursor, PAGE);
    if (stopped()) return cursor;
    const pruned: PrunedVersion[] = [];
    for (const change of page) {
      cursor = change.seq;
      if ('pruned' in change) pruned.push(change.pruned);
      else if (!sameActor(change.version.createdBy, deps.actor)) forget(deps, change.version);
    }
    if (pruned.length > 0) deps.onPruned?.(pruned);
    if (page.length < PAGE) return cursor;
  }
}

function forget(deps: ElsewhereDeps, v: MemoryVersion): void {
  const kernel = deps.kernel();
  if (!kernel) return;
  const done = () => {};
  // A new memory's inode number is new to the kernel too: only its path can be stale.
  if (v.operation !== 'created') kernel.invalidateFile(inoOf(v.memoryId), done);
  if (v.operation === 'deleted' || v.path === null) return;
  const dirIno = deps.dirs.parentIno(v.path);
  if (dirIno !== undefined && deps.dirs.inoAt(v.path) !== undefined) kernel.invalidateName(dirIno, baseName(v.path), done);
}

function sameActor(a: Actor, b: Actor): boolean {
  return a.type === 'session_actor' ? b.type === 'session_actor' && a.sessionId === b.sessionId : b.type === 'api_actor' && a.apiKeyId === b.apiKeyId;
}

/**
 * @module Full-text index upkeep (invariant 11, sqlite/schema/search.ts): writes only queue a memory's seq in
 * `search_backlog`; this re-indexes queued memories in batches. It runs in transactions of its own,
 * not writeTx: index upkeep changes no memory, so it must not tell readers' caches that one changed.
 */
import { textOf, versionContent } from './contents.js';
import type { Db } from './tx.js';

export interface SearchIndex {
  /** Re-indexes everything queued, batch by batch, inside the caller's transaction (bulk import, redaction). */
  indexQueued(): void;
  /** Re-indexes up to `max` queued memories in one transaction; returns how many stay queued. Without a queue it takes no write lock. */
  indexSearchBacklog(max: number): number;
  /** Anything queued (a read). */
  hasBacklog(): boolean;
}

/** A batch inside a caller's transaction (bulk import, redaction): no turn ends between them. */
export const BATCH = 1000;
/** ... and the text it tokenizes (old and new) at most. */
const BATCH_CHARS = 2_000_000;
/**
 * A batch of its own (the upkeep's, a search's) is one turn of the event loop, which serves every
 * mount and request: at most this many memories, and about this much text, which took 2–5 ms on
 * the 2-core host (100 memories of 4 KiB, or 4 of 100 KiB), where 500 took 12–22 ms.
 */
export const TURN_BATCH = 200;
const TURN_CHARS = 400_000;
/**
 * Taking a text out of the index (secure-delete: its pages rewritten) cost about 15 times as much
 * per character as putting one in here, so a re-indexed memory's old text counts this many times
 * against the budget: a burst of renames re-indexes in turns as short as a burst of new files.
 */
const UNINDEX_WEIGHT = 16;
/** What a batch says still waits is counted up to this (searchBacklog() counts it all, off the serving thread). */
export const PENDING_COUNTED = 10_000;

/**
 * `relaxed` runs a batch's transaction without waiting for the disk (sync.ts `derived`; the next
 * WAL sync or durable commit takes it): the index and its queue change in the same transaction, so
 * a batch lost to a power failure is still queued, and an fsync per batch would be a good part of
 * a small batch's turn.
 */
export function createSearchIndex(db: Db, relaxed: <T>(fn: () => T) => T = (fn) => fn()): SearchIndex {
  const q = {
    any: db.prepare('SELECT EXISTS (SELECT 1 FROM search_backlog)').pluck(),
    // Counted after every batch, so bounded: a count of a long queue each turn would grow with it.
    pending: db.prepare(`SELECT count(*) FROM (SELECT 1 FROM search_backlog LIMIT ${PENDING_COUNTED})`).pluck(),
    queued: db.prepare('SELECT seq, indexed_version FROM search_backlog ORDER BY seq LIMIT +?'),
    // The text the index holds for a queued memory is that of the version it was indexed at.
    indexedText: db.prepare(`SELECT path, ${versionContent('versions')} AS content FROM versions WHERE id = ?`),
    // The memory row names its text by sha (schema/memory-text.ts): read by join, as every reader does.
    current: db.prepare(`SELECT path, ${textOf('memories')} AS content FROM memories WHERE seq = ?`),
    // With secure-delete on, this erases the row's terms from the index pages, not just hides them.
    unindex: db.prepare(`INSERT INTO memories_fts (memories_fts, rowid, path, content) VALUES ('delete', ?, ?, ?)`),
    index: db.prepare('INSERT INTO memories_fts (rowid, path, content) VALUES (?, ?, ?)'),
    done: db.prepare('DELETE FROM search_backlog WHERE seq <= ?'),
  };

  function indexBatch(max: number, maxChars = BATCH_CHARS, unindexWeight = 1): number {
    let chars = 0;
    let last: number | null = null;
    for (const b of q.queued.all(max) as { seq: number; indexed_version: string | null }[]) {
      // No old text: never indexed, or its store's deletion already took it out.
      const old = b.indexed_version === null ? undefined : (q.indexedText.get(b.indexed_version) as Text | undefined);
      if (old && old.content !== null && old.path !== null) {
        q.unindex.run(b.seq, old.path, old.content);
        chars += old.content.length * unindexWeight;
      }
      // No memory row: a deleted memory, which only leaves the index.
      const now = q.current.get(b.seq) as Text | undefined;
      if (now) {
        q.index.run(b.seq, now.path, now.content);
        chars += now.content?.length ?? 0;
      }
      last = b.seq;
      if (chars >= maxChars) break;
    }
    if (last !== null) q.done.run(last);
    return q.pending.get() as number;
  }

  const batchTx = db.transaction(indexBatch);
  function indexSearchBacklog(max: number): number {
    // Checked first so that an idle server's upkeep and every search stay reads.
    if (!hasBacklog()) return 0;
    return relaxed(() => batchTx.immediate(Math.min(max, TURN_BATCH), TURN_CHARS, UNINDEX_WEIGHT));
  }

  function hasBacklog(): boolean {
    return q.any.get() === 1;
  }

  function indexQueued(): void {
    while (indexBatch(BATCH) > 0);
  }

  return { indexQueued, indexSearchBacklog, hasBacklog };
}

/** A path and content; a redacted version has neither. */
interface Text {
  path: string | null;
  content: string | null;
}

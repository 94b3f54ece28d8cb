/**
 * @module Full-text index upkeep (invariant 11, sqlite/schema/search.ts): writes only queue a memory's seq in
 * `search_backlog`; this re-indexes queued memories in batches. It runs in transactions of its own,
 * not writeTx: index upkeep changes no memory, so it must not tell readers' caches that one changed.
 *
 * Taking a text out uses FTS5's secure-delete only where an erasure is promised (schema/search-
 * remnants.ts): for memories of stores with a retention, and inside a redaction's own transaction
 * (`indexQueuedAt`; a prune leaves queued memories' versions alone). FTS5 applies a transaction's changes when it commits, with the setting it then has,
 * so a batch holds memories of one kind only. Elsewhere the words stay behind, cancelled, and their
 * store is noted; a redaction or prune there is followed by `eraseStep`s until the index is merged.
 */
import { truncateWalSoon } from './wal-checkpointer.js';
import { textOf, versionContent } from './contents.js';
import { settleHeld, type Db } from './tx.js';

export interface SearchIndex {
  /** Re-indexes everything queued, batch by batch, inside the caller's transaction (a bulk import), with secure-delete. */
  indexQueued(): void;
  /**
   * Re-indexes, with secure-delete, inside the caller's transaction (a redaction), the queued
   * memories whose index entries still hold `versionId`'s text: removing them needs that text. The
   * rest of the queue stays for the upkeep (all of it, here, held the serving thread for seconds).
   */
  indexQueuedAt(versionId: string): void;
  /**
   * One turn of the upkeep: an erasure step while one is due (`eraseStep`), else re-indexes up to
   * `max` queued memories in one transaction. Returns how many stay queued (at least 1 while an
   * erasure is under way). Without a queue or an erasure it takes no write lock. With `heavy`
   * 'elsewhere', a turn that would be heavy (an erasure step, or a batch re-indexed with
   * secure-delete) is not run: it returns HEAVY_TURN, for another connection to run (open.ts).
   */
  indexSearchBacklog(max: number, heavy?: 'here' | 'elsewhere'): number;
  /** Anything queued (a read). */
  hasBacklog(): boolean;
  /** Notes, in the caller's transaction, that a redaction or prune in `storeId` needs the store's cancelled words erased. */
  eraseDue(storeId: string): void;
  /**
   * One bounded step of merging the index into one segment while an erasure is due, in a
   * transaction of its own; true while steps remain. The step that finds nothing left to merge
   * forgets every noted store and truncates the WAL after its commit.
   */
  eraseStep(): boolean;
  /** False once a step found nothing due and nothing marked one since: `eraseStep` would do nothing (no SQL asked). */
  mayEraseDue(): boolean;
  /** Another connection may have marked an erasure due (a deleted store's purge on the writer thread): check again. */
  recheckDue(): void;
  /** Whether `eraseStep` would run a step now (an erasure is due, and no transaction is open on the connection). */
  erasureDue(): boolean;
}

/**
 * What `indexSearchBacklog(max, 'elsewhere')` answers for a heavy turn it left undone. FTS5's
 * secure-delete rewrites an index page per distinct word it takes out (3–16 ms a 4 KiB note of
 * prose, growing with the index), and an erasure's merge steps grow with the index too (up to
 * 124 ms at 100,000 notes): on the serving connection either held every mount and request that long.
 */
export const HEAVY_TURN = -1;

/** Index pages one erasure step writes at most: 16 took up to 7 ms on the 2-core host, the whole merge about 10 µs a 4 KiB memory. */
export const ERASE_PAGES = 16;

/** A batch inside a caller's transaction (a bulk import): no turn ends between them. */
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
 * Taking a text out of the index with secure-delete (its pages rewritten) cost about 15 times as much
 * per character as putting one in here, so such a text counts this many times against the budget: a
 * burst of renames in a store with a retention re-indexes in turns as short as a burst of new files.
 * A plain removal (delete markers, merged away later) costs about what an insert does and counts once:
 * counted 16 times too, a deleted store's 20,000 memories left the index in 2,800 turns of about 7,
 * each a segment of its own, and FTS5's merges of those segments (every 64th turn, up to 19 ms) were
 * the longest turns of the store's removal (test/bench/README.md, stop 51).
 */
const UNINDEX_WEIGHT = 16;
/** What a batch says still waits is counted up to this (searchBacklog() counts it all, off the serving thread). */
export const PENDING_COUNTED = 10_000;

/**
 * `marksHere`: redactions and prunes mark erasures through this connection (the serving one), so a
 * check that found none due holds until the next mark; the writer thread's connection, which runs the
 * heavy turns the serving connection hands it, checks every time.
 *
 * `relaxed` runs a batch's transaction without waiting for the disk (sync.ts `derived`; the next
 * WAL sync or durable commit takes it): the index and its queue change in the same transaction, so
 * a batch lost to a power failure is still queued, and an fsync per batch would be a good part of
 * a small batch's turn.
 */
export function createSearchIndex(db: Db, relaxed: <T>(fn: () => T) => T = (fn) => fn(), marksHere = true): SearchIndex {
  const q = {
    any: db.prepare('SELECT EXISTS (SELECT 1 FROM search_backlog)').pluck(),
    // Counted after every batch, so bounded: a count of a long queue each turn would grow with it.
    pending: db.prepare(`SELECT count(*) FROM (SELECT 1 FROM search_backlog LIMIT ${PENDING_COUNTED})`).pluck(),
    // With the store the memory (or, deleted, its indexed version) is in, and whether it keeps a retention.
    queued: db.prepare(
      `SELECT b.seq, b.indexed_version, s.id AS store_id, s.retention IS NOT NULL AS kept
       FROM search_backlog b
       LEFT JOIN memories m ON m.seq = b.seq
       LEFT JOIN versions v ON v.id = b.indexed_version
       LEFT JOIN stores s ON s.id = coalesce(m.store_id, v.store_id)
       ORDER BY b.seq LIMIT +?`,
    ),
    // The text the index holds for a queued memory is that of the version it was indexed at.
    indexedText: db.prepare(`SELECT path, ${versionContent('versions')} AS content FROM versions WHERE id = ?`),
    // The memory row names its text by sha (schema/memory-text.ts): read by join, as every reader does.
    current: db.prepare(`SELECT path, ${textOf('memories')} AS content FROM memories WHERE seq = ?`),
    // With secure-delete on, this erases the row's terms from the index pages, not just hides them.
    unindex: db.prepare(`INSERT INTO memories_fts (memories_fts, rowid, path, content) VALUES ('delete', ?, ?, ?)`),
    index: db.prepare('INSERT INTO memories_fts (rowid, path, content) VALUES (?, ?, ?)'),
    done: db.prepare('DELETE FROM search_backlog WHERE seq <= ?'),
    // The backlog is short (the upkeep keeps it so): a scan of it is bounded.
    queuedAt: db.prepare('SELECT seq FROM search_backlog WHERE indexed_version = ? ORDER BY seq').pluck(),
    doneOne: db.prepare('DELETE FROM search_backlog WHERE seq = ?'),
    // Set on every batch that takes a text out: FTS5 keeps it in its config table (other processes share it).
    // Literals: FTS5 refuses the value bound as a JavaScript number (a REAL).
    secureOn: db.prepare(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)`),
    secureOff: db.prepare(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 0)`),
    secureNow: db.prepare(`SELECT v FROM memories_fts_config WHERE k = 'secure-delete'`).pluck(),
    noteRemnants: db.prepare('INSERT INTO search_remnants (store_id) VALUES (?) ON CONFLICT DO NOTHING'),
    // A deleted store's note too (its rows are gone, or going, without secure-delete): a fork deleted
    // before its source redacts the text they shared left that text's words in the index pages, and
    // nothing else would ever merge them away. Every note goes once the merge is done (forgetRemnants).
    markDue: db.prepare(
      `UPDATE search_remnants SET erase_due = 1
       WHERE (store_id = ? OR NOT EXISTS (SELECT 1 FROM stores s WHERE s.id = search_remnants.store_id AND s.deleted_at IS NULL))`,
    ),
    due: db.prepare('SELECT EXISTS (SELECT 1 FROM search_remnants WHERE erase_due = 1)').pluck(),
    merge: db.prepare(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('merge', -${ERASE_PAGES})`),
    changes: db.prepare('SELECT total_changes()').pluck(),
    forgetRemnants: db.prepare('DELETE FROM search_remnants'),
  };

  /**
   * `secureAll`: every text taken out is erased (a caller's transaction that promises it); otherwise
   * the first memory with a text to take out sets the batch's kind, and it ends before one of the other.
   * `ownTx`: the batch is a transaction of its own; one that takes nothing out then commits with
   * secure-delete off (insertOnly).
   */
  function indexBatch(max: number, maxChars = BATCH_CHARS, unindexWeight = 1, secureAll = false, secureHere = true, ownTx = false): number {
    let chars = 0;
    let last: number | null = null;
    let secure: boolean | null = null;
    const noted = new Set<string>();
    for (const b of q.queued.all(max) as { seq: number; indexed_version: string | null; store_id: string | null; kept: number | null }[]) {
      // No old text: never indexed, or its store's deletion already took it out.
      const old = b.indexed_version === null ? undefined : (q.indexedText.get(b.indexed_version) as Text | undefined);
      if (old && old.content !== null && old.path !== null) {
        const wants = secureAll || b.kept === 1;
        if (secure === null) {
          // Nothing is written before the first text taken out, so a heavy batch left undone leaves no trace.
          if (wants && !secureHere && last === null) return HEAVY_TURN;
          if (wants && !secureHere) break;
          secure = wants;
          (secure ? q.secureOn : q.secureOff).run();
        } else if (secure !== wants) {
          break;
        }
        if (!secure && b.store_id !== null && !noted.has(b.store_id)) {
          noted.add(b.store_id);
          q.noteRemnants.run(b.store_id);
        }
        // Only secure-delete costs more than putting the text in: a plain removal writes delete markers.
        chars += old.content.length * (secure ? unindexWeight : 1);
      }
      chars += reindex(b.seq, old);
      last = b.seq;
      if (chars >= maxChars) break;
    }
    if (last !== null) q.done.run(last);
    if (secure === null && ownTx) insertOnly();
    return q.pending.get() as number;
  }

  /**
   * A batch that only puts texts in commits with secure-delete off. The setting stays in the index's
   * config after the last batch that erased (and a new file starts with it on), and with it on FTS5
   * flushes every new entry one by one, testing each for a delete marker by the first byte of its
   * size, which many position lists of 64 bytes or more have set, and then searching the index for
   * that word and memory. A batch of new 4 KiB notes took 2.7 times as long (test/bench/README.md,
   * stop 53). Never inside a caller's transaction: a removal made earlier in it must commit with
   * secure-delete on, as it was taken out.
   */
  function insertOnly(): void {
    if (Number(q.secureNow.get() ?? 0) !== 0) q.secureOff.run();
  }

  /**
   * Takes a memory's old text (`old`, if it has one) out of the index and puts its current one in (a
   * deleted memory has none: it only leaves); returns the characters put in.
   */
  function reindex(seq: number, old: Text | undefined): number {
    if (old && old.content !== null && old.path !== null) q.unindex.run(seq, old.path, old.content);
    const now = q.current.get(seq) as Text | undefined;
    if (!now) return 0;
    q.index.run(seq, now.path, now.content);
    return now.content?.length ?? 0;
  }

  const batchTx = db.transaction(indexBatch);
  /**
   * Whether an erasure may be due: set at open (a crash may have left one) and by `eraseDue`, cleared
   * by a step that finds none or finishes one, so the checks before every write and upkeep turn
   * cost no SQL the rest of the time.
   */
  let mayBeDue = true;

  /**
   * Whether an erasure is due (a read, skipped while the flag says none can be). A check that finds
   * none is remembered only where every erasure is marked (`marksHere`: not on the writer thread's
   * connection, which the serving connection's marks do not reach).
   */
  function dueNow(): boolean {
    if (!mayBeDue) return false;
    if (q.due.get() === 1) return true;
    if (marksHere) mayBeDue = false;
    return false;
  }

  function indexSearchBacklog(max: number, heavy: 'here' | 'elsewhere' = 'here'): number {
    // No index writes while an erasure merges: each would add a segment, and the merge might never end.
    if (dueNow()) {
      if (heavy === 'elsewhere' && !inCallersTx()) return HEAVY_TURN;
      return eraseStep() ? Math.max(1, pendingCount()) : pendingCount();
    }
    // Checked first so that an idle server's upkeep and every search stay reads.
    if (!hasBacklog()) return 0;
    // A batch of its own, not a savepoint of a held batch of mount writes: FTS5 applies what the
    // batch takes out when its transaction commits, with secure-delete as the batch set it.
    settleHeld(db);
    // Inside a caller's transaction (a search's catching-up in an API write) no other connection can write.
    const secureHere = heavy === 'here' || db.inTransaction;
    const ownTx = !db.inTransaction;
    return relaxed(() => batchTx.immediate(Math.min(max, TURN_BATCH), TURN_CHARS, UNINDEX_WEIGHT, false, secureHere, ownTx));
  }

  /** A transaction is open on the connection that is not a held batch of mount writes (which settles first). */
  function inCallersTx(): boolean {
    settleHeld(db);
    return db.inTransaction;
  }

  function pendingCount(): number {
    return q.pending.get() as number;
  }

  // `merge` with a negative page count merges any segments, whatever their level; a step that
  // changes fewer than two rows found nothing to merge (FTS5's documented test): one segment is left,
  // and a merge keeps no cancelled entry, so no word taken out without secure-delete is in the file.
  const stepTx = db.transaction((): 'idle' | 'more' | 'done' => {
    if (q.due.get() !== 1) return 'idle';
    const before = q.changes.get() as number;
    q.merge.run();
    if ((q.changes.get() as number) - before >= 2) return 'more';
    q.forgetRemnants.run();
    return 'done';
  });
  function eraseStep(): boolean {
    if (!mayBeDue) return false;
    // Not inside a caller's transaction (an API write's group commit): the steps would hold it, and
    // every other writer and reader with it. The service runs them once it has committed.
    if (inCallersTx()) return false;
    const step = relaxed(() => stepTx.immediate());
    if (step !== 'more' && marksHere) mayBeDue = false;
    // As after a redaction: the WAL's copies of the pages the merge freed leave the disk too.
    if (step === 'done') truncateWalSoon(db);
    return step === 'more';
  }

  function hasBacklog(): boolean {
    return q.any.get() === 1;
  }

  function indexQueued(): void {
    while (indexBatch(BATCH, BATCH_CHARS, 1, true) > 0);
  }

  function indexQueuedAt(versionId: string): void {
    const seqs = q.queuedAt.all(versionId) as number[];
    if (seqs.length === 0) return;
    const old = q.indexedText.get(versionId) as Text | undefined;
    q.secureOn.run();
    for (const seq of seqs) {
      reindex(seq, old);
      q.doneOne.run(seq);
    }
  }

  return {
    indexQueued,
    indexQueuedAt,
    indexSearchBacklog,
    hasBacklog,
    eraseDue(storeId) {
      if (q.markDue.run(storeId).changes > 0) mayBeDue = true;
    },
    eraseStep,
    mayEraseDue: () => mayBeDue,
    recheckDue: () => void (mayBeDue = true),
    erasureDue: () => mayBeDue && !inCallersTx() && dueNow(),
  };
}

/** A path and content; a redacted version has neither. */
interface Text {
  path: string | null;
  content: string | null;
}

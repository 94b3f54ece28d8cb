/**
 * @module Write-behind for a mount's saves (DESIGN §5): a close() is answered before its commit.
 *
 * A mount's write (a save, a rename, a delete) runs in a held batch: the connection's transaction,
 * opened by the first such write and left open, so that the writes after it join it as savepoints
 * and one COMMIT (at synchronous=NORMAL) takes them all, shortly after. Committing a version's rows
 * and their index pages once per batch instead of once per save is what makes a save cheap: the
 * commit and its WAL frames were most of a save's time on the serving thread.
 *
 * What a closed file is promised does not change:
 * - visible to every reader at once: the API, MCP and every mount read through this connection,
 *   which sees its own open transaction; a read on another connection (the reader threads) and every
 *   other write commit the batch first (tx.ts `settleHeld`, port-view.ts), and other processes see
 *   it within HOLD_MS, inside the 100 ms in which they see any commit of ours (sqlite/changes.ts);
 * - safe from a crash of this process: each write is appended to a journal (sqlite/journal.ts)
 *   before it is answered, and replayed at the next open if its batch never committed;
 * - on disk by fsync(), and within 100 ms anyway: a WAL sync commits the batch first.
 *
 * A refused write (a rule, a precondition) rolls back its own savepoint only, as before. If the
 * COMMIT itself fails (a full disk), each write of the batch is applied again in a transaction of
 * its own, and any that still fails is logged as lost: its close() had already returned.
 */
import { existsSync, truncateSync } from 'node:fs';
import type { JournaledWrite, WriteResult } from '../port.js';
import type { Memory } from '../../domain/types.js';
import { journalFileOf, openJournal, readJournal, type Journal, type JournalRecord } from './journal.js';
import type { WalSync } from './sync.js';
import { LOCK_WAIT_MS } from './lock-wait.js';
import { withBusyTimeout } from './pragmas.js';
import { beginHeld, commitHeld, joinHeld, outerTx, registerHeldBatch, rollbackHeld, type Db } from './tx.js';

/** How long a batch stays open after its first write, at most. */
export const HOLD_MS = 10;
/** A batch commits at once when this many writes have joined it. */
export const MAX_BATCH = 64;

/** The connection's memory writes, synchronous: what a journaled write names. */
export interface JournaledMethods {
  saveMemoryAt(input: Extract<JournaledWrite, { method: 'saveMemoryAt' }>['input']): WriteResult;
  updateMemory(input: Extract<JournaledWrite, { method: 'updateMemory' }>['input']): WriteResult;
  moveMemory(input: Extract<JournaledWrite, { method: 'moveMemory' }>['input']): Memory;
  deleteMemory(input: Extract<JournaledWrite, { method: 'deleteMemory' }>['input']): void;
}

export interface WriteBehindOptions {
  /** Told of replayed batches and of writes lost to a failed commit. */
  log: (line: string) => void;
  holdMs?: number;
}

export interface WriteBehind {
  /** A batch is open: its writes are not committed yet. */
  readonly open: boolean;
  /** Runs `fn` (which makes `write`) in the held batch and journals `write` before it resolves. The caller holds the writer gate. */
  join<T>(fn: () => Promise<T>, write: JournaledWrite): Promise<T>;
  /** Commits what is held and closes the journal. */
  close(): void;
}

/** Applies one journaled write through the connection's own statements (one transaction each). */
function apply(methods: JournaledMethods, w: JournaledWrite): void {
  switch (w.method) {
    case 'saveMemoryAt':
      methods.saveMemoryAt(w.input);
      return;
    case 'updateMemory':
      methods.updateMemory(w.input);
      return;
    case 'moveMemory':
      methods.moveMemory(w.input);
      return;
    case 'deleteMemory':
      methods.deleteMemory(w.input);
      return;
  }
}

function describe(w: JournaledWrite): string {
  const where = 'path' in w.input ? ` ${w.input.path}` : ` memory ${w.input.memoryId}`;
  return `${w.method} in ${w.input.storeId}${where}`;
}

/**
 * Write-behind over the database at `file`, with its journal beside it (journal.ts). Only the one
 * process that owns the data directory may hold one: another would replay a live process's journal.
 */
export function createWriteBehind(db: Db, file: string, walSync: WalSync, methods: JournaledMethods, options: WriteBehindOptions): WriteBehind {
  const { log, holdMs = HOLD_MS } = options;
  const journalFile = journalFileOf(file);
  replayJournal(db, journalFile, methods, log);
  const journal: Journal = openJournal(journalFile);
  journal.reset();

  let open = false;
  let joining = false;
  let batch = 0;
  /** The open batch's writes, in order: what a failed COMMIT applies again one by one. */
  let held: JournaledWrite[] = [];
  let endHold: ((committed: boolean) => void) | null = null;
  let timer: NodeJS.Timeout | null = null;

  registerHeldBatch(db, {
    get open() {
      return open;
    },
    get joining() {
      return joining;
    },
    settle,
  });

  return {
    get open() {
      return open;
    },
    async join<T>(fn: () => Promise<T>, write: JournaledWrite): Promise<T> {
      if (!open) begin();
      joining = true;
      try {
        return await joinHeld(db, async () => {
          const result = await fn();
          // Inside the savepoint: a write that cannot be journaled is refused, not half kept.
          journal.append({ batch, write });
          held.push(write);
          return result;
        });
      } catch (err) {
        // SQLite rolls a whole transaction back by itself on some failures (a full disk).
        if (open && !db.inTransaction) recover(err);
        throw err;
      } finally {
        joining = false;
        if (open && held.length >= MAX_BATCH) setImmediate(settle);
      }
    },
    close() {
      settle();
      journal.close();
    },
  };

  function begin(): void {
    // synchronous cannot change inside a transaction: NORMAL from before BEGIN until after COMMIT.
    const done = walSync.hold();
    try {
      beginHeld(db);
    } catch (err) {
      done(false);
      throw err;
    }
    endHold = done;
    open = true;
    batch += 1;
    held = [];
    timer = setTimeout(settle, holdMs);
    timer.unref();
  }

  function settle(): void {
    if (!open) return;
    // A join runs from its BEGIN or savepoint to its journal record without yielding to timers; if
    // one ever did, its batch commits once it is done.
    if (joining) {
      setImmediate(settle);
      return;
    }
    try {
      if (!db.inTransaction) throw new Error('the held batch was rolled back');
      commitHeld(db);
    } catch (err) {
      recover(err);
      return;
    }
    end(true);
    journal.reset();
  }

  /** Ends the batch: the connection back at FULL, the commit counted for the WAL sync if it committed. */
  function end(committed: boolean): void {
    if (timer) clearTimeout(timer);
    timer = null;
    open = false;
    const done = endHold;
    endHold = null;
    done?.(committed);
  }

  /** The batch could not commit: each of its writes gets a transaction of its own, and what fails is logged. */
  function recover(err: unknown): void {
    const writes = held;
    held = [];
    rollbackHeld(db);
    end(false);
    if (writes.length > 0) {
      log(`mnemo: error: a batch of ${writes.length} mount write(s) failed to commit (${message(err)}); applying each again`);
    }
    // Closed writes, answered already: each may wait for another process's lock here, as before (sqlite/lock-wait.ts).
    withBusyTimeout(db, LOCK_WAIT_MS, () => {
      for (const w of writes) {
        try {
          apply(methods, w);
        } catch (again) {
          log(`mnemo: error: lost a closed mount write, ${describe(w)}: ${message(again)}`);
        }
      }
    });
    journal.reset();
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * At open, before anything else writes: the batches a crash left in the journal that never
 * committed are applied again, in order, each batch in one transaction. A batch committed whole or
 * not at all, so one version of it in the database means it committed (a batch whose writes all
 * changed nothing has no version to tell, and applying such writes again changes nothing either).
 * A write whose memory or path another process (`mnemo mount` or `mcp` beside or after the crashed
 * one) changed after the write was made is not applied: it would put older text over newer as the
 * head. It is logged at warn, naming what was kept.
 */
export function replayJournal(db: Db, file: string, methods: JournaledMethods, log: (line: string) => void): void {
  const records = readJournal(file);
  if (records.length === 0) return;
  const exists = db.prepare('SELECT 1 FROM versions WHERE id = ?').pluck();
  const newer = newerVersion(db);
  const batches = new Map<number, JournalRecord[]>();
  for (const r of records) batches.set(r.batch, [...(batches.get(r.batch) ?? []), r]);
  let replayed = 0;
  for (const rs of batches.values()) {
    if (rs.some((r) => exists.get(r.write.input.versionId) !== undefined)) continue;
    outerTx(db, () => {
      for (const r of rs) {
        const kept = newer(r.write);
        if (kept) {
          log(`mnemo: warn: a journaled mount write of ${r.write.input.now} was not replayed, ${describe(r.write)}: ${kept} changed it later, and stays`);
          continue;
        }
        try {
          apply(methods, r.write);
          replayed += 1;
        } catch (err) {
          log(`mnemo: warn: a journaled mount write was refused on replay, ${describe(r.write)}: ${message(err)}`);
        }
      }
    });
  }
  if (replayed > 0) log(`mnemo: replayed ${replayed} mount write(s) closed before the last stop but not committed`);
}

/**
 * Replays what a crashed server left in the journal of the database at `file`, then empties it: for
 * `mnemo mount` and `mnemo mcp`, which hold no write-behind of their own, when no server owns the
 * data dir (the caller holds its server lock), so that their writes come after the replayed ones.
 */
export function replayLeftJournal(db: Db, file: string, methods: JournaledMethods, log: (line: string) => void): void {
  const journalFile = journalFileOf(file);
  replayJournal(db, journalFile, methods, log);
  if (existsSync(journalFile)) truncateSync(journalFile, 0);
}

/** `newer(write)`: "version V of <when>" when a version later than the write is at a path it writes or of a memory it names; else null. */
function newerVersion(db: Db): (w: JournaledWrite) => string | null {
  const ofMemory = db.prepare('SELECT id, created_at FROM versions WHERE store_id = ? AND memory_id = ? AND created_at > ? ORDER BY created_at DESC LIMIT 1');
  const atPath = db.prepare('SELECT id, created_at FROM versions WHERE store_id = ? AND path = ? AND created_at > ? ORDER BY created_at DESC LIMIT 1');
  return (w) => {
    const { storeId, now } = w.input;
    const memoryId = w.method === 'saveMemoryAt' ? null : w.input.memoryId;
    const path = 'path' in w.input && typeof w.input.path === 'string' ? w.input.path : null;
    const row = ((memoryId === null ? undefined : ofMemory.get(storeId, memoryId, now)) ?? (path === null ? undefined : atPath.get(storeId, path, now))) as
      | { id: string; created_at: string }
      | undefined;
    return row ? `version ${row.id} of ${row.created_at}` : null;
  };
}

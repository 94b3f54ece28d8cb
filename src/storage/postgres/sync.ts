/**
 * @module Commits that reach the disk later (DESIGN §5) on PostgreSQL. A mount's save commits with
 * `synchronous_commit = off` for its transaction: the server flushes its WAL within 3 ×
 * `wal_writer_delay` (600 ms by default), and a crash of PostgreSQL (not of mnemo) may lose that
 * much. `sync()` commits one transaction synchronously: its commit waits for the WAL to be flushed
 * up to its own record, which covers every commit before it.
 */
import type pg from 'pg';
import { inTransaction, run } from './db.js';

export function createWalSync(pool: pg.Pool) {
  let unsynced = 0;
  return {
    relaxedCommit: () => {
      unsynced += 1;
    },
    unsynced: () => unsynced,
    async sync(): Promise<void> {
      const pending = unsynced;
      if (pending === 0) return;
      // A transactional WAL message gives the transaction an id and a commit record to wait for;
      // a transaction that writes nothing would commit without flushing anything.
      await inTransaction(pool, async (c) => {
        await run(c, 'SET LOCAL synchronous_commit = on');
        await run(c, "SELECT pg_logical_emit_message(true, 'mnemo', 'sync')");
      });
      unsynced = Math.max(0, unsynced - pending);
    },
  };
}

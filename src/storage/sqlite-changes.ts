/**
 * @module How a reader can tell that nothing changed: a change mark that moves after any committed
 * write (another process's within 100 ms), and the next moment a memory of a store expires (expiry
 * hides rows without a write). The mount keeps storage answers while both hold (fs/storage-view.ts).
 */
import type { Storage } from './port.js';
import type { Db } from './tx.js';

/** How stale a reader may be about commits made by another process. */
const OUTSIDE_CHECK_MS = 100;

export function createChangeStatements(db: Db): Pick<Storage, 'changeMark' | 'nextExpiry'> {
  const q = {
    // Rows changed by this connection since it opened (every write of this process goes through it).
    local: db.prepare('SELECT total_changes()').pluck(),
    // Moves when another connection (a CLI beside the server) commits.
    outside: db.prepare('PRAGMA data_version').pluck(),
    nextExpiry: db.prepare(
      'SELECT MIN(expires_at) FROM memories WHERE store_id = ? AND expires_at IS NOT NULL AND expires_at > ?',
    ).pluck(),
  };
  let mark = 0;
  let local = -1;
  let outside = -1;
  let outsideCheckedAt = 0;

  return {
    changeMark(): number {
      const l = q.local.get() as number;
      if (l !== local) [local, mark] = [l, mark + 1];
      // The pragma costs 15 times the counter; a writer in another process is rare (admin CLIs), so
      // its commits are seen within OUTSIDE_CHECK_MS rather than at once.
      const now = Date.now();
      if (now - outsideCheckedAt >= OUTSIDE_CHECK_MS) {
        outsideCheckedAt = now;
        const o = q.outside.get() as number;
        if (o !== outside) [outside, mark] = [o, mark + 1];
      }
      return mark;
    },
    nextExpiry(storeId, after) {
      return (q.nextExpiry.get(storeId, after) as string | null) ?? null;
    },
  };
}

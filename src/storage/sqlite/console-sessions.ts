/** @module SQLite statements for web console sign-ins (sqlite/schema/console.ts). */
import { toConsoleSession, type ConsoleSessionRow } from '../common/console-session-row.js';
import type { ConsoleSessionStorage } from '../port.js';
import type { Synchronous } from './reads.js';
import type { Db } from './tx.js';

export function createConsoleSessionStatements(db: Db): Synchronous<ConsoleSessionStorage> {
  const q = {
    insert: db.prepare(
      'INSERT INTO console_sessions (id_hash, csrf, key_id, key_hash, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    find: db.prepare('SELECT * FROM console_sessions WHERE id_hash = ?'),
    touch: db.prepare('UPDATE console_sessions SET last_seen_at = ? WHERE id_hash = ?'),
    delete: db.prepare('DELETE FROM console_sessions WHERE id_hash = ?'),
    purge: db.prepare('DELETE FROM console_sessions WHERE last_seen_at < ?'),
  };
  return {
    insertConsoleSession(s) {
      q.insert.run(s.idHash, s.csrf, s.keyId, s.keyHash, s.createdAt, s.lastSeenAt);
    },
    findConsoleSession(idHash) {
      const r = q.find.get(idHash) as ConsoleSessionRow | undefined;
      return r ? toConsoleSession(r) : null;
    },
    touchConsoleSession(idHash, lastSeenAt) {
      q.touch.run(lastSeenAt, idHash);
    },
    deleteConsoleSession(idHash) {
      q.delete.run(idHash);
    },
    purgeConsoleSessions(idleBefore) {
      return q.purge.run(idleBefore).changes;
    },
  };
}

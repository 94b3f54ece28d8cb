/** @module PostgreSQL operations for web console sign-ins (postgres/schema/v5.ts). */
import type { StoredConsoleSession } from '../port.js';
import { toConsoleSession, type ConsoleSessionRow } from '../common/console-session-row.js';
import { all, run, type Q } from './db.js';

export const consoleSessionWrites = {
  async insertConsoleSession(q: Q, s: StoredConsoleSession): Promise<void> {
    await run(q, 'INSERT INTO console_sessions (id_hash, csrf, key_id, key_hash, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      s.idHash, s.csrf, s.keyId, s.keyHash, s.createdAt, s.lastSeenAt,
    ]);
  },
  async touchConsoleSession(q: Q, idHash: string, lastSeenAt: string): Promise<void> {
    await run(q, 'UPDATE console_sessions SET last_seen_at = $1 WHERE id_hash = $2', [lastSeenAt, idHash]);
  },
  async deleteConsoleSession(q: Q, idHash: string): Promise<void> {
    await run(q, 'DELETE FROM console_sessions WHERE id_hash = $1', [idHash]);
  },
  async purgeConsoleSessions(q: Q, idleBefore: string): Promise<number> {
    return run(q, 'DELETE FROM console_sessions WHERE last_seen_at < $1', [idleBefore]);
  },
};

export const consoleSessionReads = {
  async findConsoleSession(q: Q, idHash: string): Promise<StoredConsoleSession | null> {
    const [r] = await all<ConsoleSessionRow>(q, 'SELECT * FROM console_sessions WHERE id_hash = $1', [idHash]);
    return r ? toConsoleSession(r) : null;
  },
};

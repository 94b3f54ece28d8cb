/** @module The console_sessions row as both engines return it, and its domain shape (engine-neutral). */
import type { StoredConsoleSession } from '../port.js';

export interface ConsoleSessionRow {
  id_hash: string;
  csrf: string;
  key_id: string;
  key_hash: string;
  created_at: string;
  last_seen_at: string;
}

export function toConsoleSession(r: ConsoleSessionRow): StoredConsoleSession {
  return { idHash: r.id_hash, csrf: r.csrf, keyId: r.key_id, keyHash: r.key_hash, createdAt: r.created_at, lastSeenAt: r.last_seen_at };
}

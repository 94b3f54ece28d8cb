/**
 * @module The console-sessions role: web console sign-ins kept in the database, so every server on
 * one store (PostgreSQL, many hosts behind a balancer) and a restarted one know them. A session is
 * found by the hash of its cookie value, never the value itself: reading the database does not
 * hand out live sign-ins.
 */
export interface StoredConsoleSession {
  /** sha256 (hex) of the cookie value. */
  idHash: string;
  /** The token every state-changing form of this session carries. */
  csrf: string;
  keyId: string;
  /** The hash of the key it signed in with (as api_keys keeps it), checked again on every request. */
  keyHash: string;
  createdAt: string;
  lastSeenAt: string;
}

export interface ConsoleSessionStorage {
  insertConsoleSession(session: StoredConsoleSession): Promise<void>;
  findConsoleSession(idHash: string): Promise<StoredConsoleSession | null>;
  /** Moves a session's last request time (its idle timer). */
  touchConsoleSession(idHash: string, lastSeenAt: string): Promise<void>;
  deleteConsoleSession(idHash: string): Promise<void>;
  /** Ends every session whose last request was before `idleBefore`; returns how many. */
  purgeConsoleSessions(idleBefore: string): Promise<number>;
}

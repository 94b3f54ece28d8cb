/**
 * @module Web console sign-ins (issue 16): server-side sessions named by a random cookie value,
 * kept in the database by the hash of that value (storage/port/console-sessions.ts), so a restart
 * keeps them and every server on one store knows them (issue 14: hosts behind one balancer). A
 * session keeps the hash of the key it signed in with, never the secret, and every request checks
 * that key again through the API's own lookup, so a revoked key ends its console sessions at their
 * next request, and the role, workspace and grants are the API's. A session ends after 12 hours
 * without a request (the injected clock), or at sign-out.
 */
import { createHash } from 'node:crypto';
import { hashSecret, type Keys } from './keys.js';
import type { IdGenerator } from './ids.js';
import { randomToken } from './ids.js';
import type { ApiKey } from '../domain/types.js';
import type { ConsoleSessionStorage } from '../storage/port.js';

export const CONSOLE_IDLE_MS = 12 * 60 * 60 * 1000;
/**
 * How stale a session's last request time may get before a request writes it again: every console
 * page would otherwise be a durable write; a minute is nothing against a 12-hour idle limit.
 */
export const CONSOLE_TOUCH_MS = 60 * 1000;

export interface ConsoleSession {
  /** The cookie value: 40 random base62 characters, never logged or stored. */
  id: string;
  /** The token every state-changing form of this session carries. */
  csrf: string;
  keyId: string;
  createdAt: string;
  lastSeenAt: string;
}

export interface ConsoleSessionsOptions {
  storage: ConsoleSessionStorage;
  keys: Pick<Keys, 'authenticate' | 'authenticateHash'>;
  clock: () => string;
  ids: IdGenerator;
  idleMs?: number;
}

/** What the database keeps for a cookie value. */
const hashOf = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');

export function createConsoleSessions({ storage, keys, clock, ids, idleMs = CONSOLE_IDLE_MS }: ConsoleSessionsOptions) {
  const since = (from: string, now: string) => Date.parse(now) - Date.parse(from);

  return {
    /** Signs in with an API key's secret: 401 `unauthenticated` for an unknown or revoked key. */
    async signIn(secret: string): Promise<{ session: ConsoleSession; key: ApiKey }> {
      const key = await keys.authenticate(secret);
      const now = clock();
      await storage.purgeConsoleSessions(new Date(Date.parse(now) - idleMs).toISOString());
      const session = { id: ids('consoleSession') + randomToken(16), csrf: randomToken(32), keyId: key.id, createdAt: now, lastSeenAt: now };
      await storage.insertConsoleSession({
        idHash: hashOf(session.id), csrf: session.csrf, keyId: key.id, keyHash: hashSecret(secret), createdAt: now, lastSeenAt: now,
      });
      return { session, key };
    },

    /** The session and its key, or null (unknown, idle past the limit, or its key revoked: it ends). Renews the idle timer. */
    async resume(id: string | undefined): Promise<{ session: ConsoleSession; key: ApiKey } | null> {
      if (!id) return null;
      const idHash = hashOf(id);
      const s = await storage.findConsoleSession(idHash);
      if (!s) return null;
      const now = clock();
      if (since(s.lastSeenAt, now) > idleMs) {
        await storage.deleteConsoleSession(idHash);
        return null;
      }
      let key: ApiKey;
      try {
        key = await keys.authenticateHash(s.keyHash);
      } catch {
        await storage.deleteConsoleSession(idHash);
        return null;
      }
      let lastSeenAt = s.lastSeenAt;
      if (since(lastSeenAt, now) >= CONSOLE_TOUCH_MS) {
        lastSeenAt = now;
        await storage.touchConsoleSession(idHash, now);
      }
      return { session: { id, csrf: s.csrf, keyId: s.keyId, createdAt: s.createdAt, lastSeenAt }, key };
    },

    async signOut(id: string | undefined): Promise<void> {
      if (id) await storage.deleteConsoleSession(hashOf(id));
    },
  };
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>;

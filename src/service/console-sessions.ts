/**
 * @module Web console sign-ins (issue 16): server-side sessions named by a random cookie value.
 * Kept in this process's memory: a restart signs everyone out, and servers behind one balancer do
 * not share them (issue 14). A session keeps the hash of the key it signed in with, never the
 * secret, and every request checks that key again through the API's own lookup, so a revoked key
 * ends its console sessions at their next request, and the role, workspace and grants are the
 * API's. A session ends after 12 hours without a request (the injected clock), or at sign-out.
 */
import { hashSecret, type Keys } from './keys.js';
import type { IdGenerator } from './ids.js';
import { randomToken } from './ids.js';
import type { ApiKey } from '../domain/types.js';

export const CONSOLE_IDLE_MS = 12 * 60 * 60 * 1000;

export interface ConsoleSession {
  /** The cookie value: 40 random base62 characters, never logged. */
  id: string;
  /** The token every state-changing form of this session carries. */
  csrf: string;
  keyId: string;
  createdAt: string;
  lastSeenAt: string;
}

export interface ConsoleSessionsOptions {
  keys: Pick<Keys, 'authenticate' | 'authenticateHash'>;
  clock: () => string;
  ids: IdGenerator;
  idleMs?: number;
}

export function createConsoleSessions({ keys, clock, ids, idleMs = CONSOLE_IDLE_MS }: ConsoleSessionsOptions) {
  const live = new Map<string, ConsoleSession & { keyHash: string }>();
  const idle = (s: ConsoleSession, now: string) => Date.parse(now) - Date.parse(s.lastSeenAt) > idleMs;

  function sweep(now: string): void {
    for (const [id, s] of live) if (idle(s, now)) live.delete(id);
  }

  return {
    /** Signs in with an API key's secret: 401 `unauthenticated` for an unknown or revoked key. */
    async signIn(secret: string): Promise<{ session: ConsoleSession; key: ApiKey }> {
      const key = await keys.authenticate(secret);
      const now = clock();
      sweep(now);
      const session = { id: ids('consoleSession') + randomToken(16), csrf: randomToken(32), keyId: key.id, createdAt: now, lastSeenAt: now };
      live.set(session.id, { ...session, keyHash: hashSecret(secret) });
      return { session, key };
    },

    /** The session and its key, or null (unknown, idle past the limit, or its key revoked: it ends). Renews the idle timer. */
    async resume(id: string | undefined): Promise<{ session: ConsoleSession; key: ApiKey } | null> {
      if (!id) return null;
      const s = live.get(id);
      if (!s) return null;
      const now = clock();
      if (idle(s, now)) {
        live.delete(id);
        return null;
      }
      let key: ApiKey;
      try {
        key = await keys.authenticateHash(s.keyHash);
      } catch {
        live.delete(id);
        return null;
      }
      s.lastSeenAt = now;
      const { keyHash: _hash, ...session } = s;
      return { session, key };
    },

    async signOut(id: string | undefined): Promise<void> {
      if (id) live.delete(id);
    },
  };
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>;

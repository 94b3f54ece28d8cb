/**
 * @module The cross-host wake-up's wire (issue 14): every write transaction on PostgreSQL publishes
 * a NOTIFY on one channel, inside the transaction, so it is delivered only if it commits. The
 * NOTIFY is a wake-up, not the truth: a listener that was away treats everything as changed
 * (listener.ts), and readers then read the database. Payloads are space-separated words (ids never
 * hold spaces):
 * - `c <origin> <store id> <commit_seq>`: a version committed in that store (commit-order.ts);
 * - `c <origin> * 0`: some other write (a mode, a store's archiving, a redaction): any store;
 * - `e <origin> <workspace id> <session id>`: a session was ended (its node unmounts it);
 * - `k <origin> <workspace id> <key id>`: an API key was revoked (every server forgets it, key-cache.ts);
 * - `r <origin> <store id> <version id> <sha-256 or ->`: a version was redacted (every server's
 *   mounts drop what they keep of it: the text by its sha when no version holds it any more, `-` while one does).
 * A notice sent inside a savepoint that rolls back is discarded with it, as is the write it announced.
 * `origin` is one storage's random id, so a server ignores its own commits (its own counters
 * already moved) and still hears another storage's in the same process (tests).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { run, runWithNext, type Q } from './db.js';

export const CHANNEL = 'mnemo_changes';

export type Notice =
  | { kind: 'change'; origin: string; storeId: string | null; seq: number }
  | { kind: 'session_ended'; origin: string; workspaceId: string; sessionId: string }
  | { kind: 'key_revoked'; origin: string; workspaceId: string; keyId: string }
  | { kind: 'version_redacted'; origin: string; storeId: string; versionId: string; erasedSha256: string | null };

export function newOrigin(): string {
  return randomBytes(8).toString('hex');
}

/** Which storage each pooled connection belongs to (tagged as each transaction begins). */
const origins = new WeakMap<object, string>();

/** What one transaction (by its client) published so far, and whether it owes a notice for any store. */
interface Published {
  named: number;
  anyStore: boolean;
}
const published = new WeakMap<object, Published>();

function state(q: object): Published {
  let s = published.get(q);
  if (!s) published.set(q, (s = { named: 0, anyStore: false }));
  return s;
}

export function adopt(client: pg.ClientBase, origin: string): void {
  origins.set(client, origin);
  published.delete(client);
}

/**
 * The notice's text before the commit number, for the statement that takes a store's next commit
 * number (`mnemo_append`, commit-order.ts), so it costs no round trip of its own; null for a
 * client of no storage.
 */
export function noticeOfCommit(q: Q, storeId: string): string | null {
  const origin = origins.get(q);
  if (origin === undefined) return null;
  state(q).named += 1;
  return `c ${origin} ${storeId} `;
}

/**
 * Wraps a write so that one which named no store while it ran (a mode, a store's archiving, a
 * redaction: no version) makes its transaction owe a notice for any store. `quiet` writes change
 * nothing a mount or a feed shows (receipts, keys, the audit log, session rows), and owe none.
 */
export function tracked<A extends unknown[], R>(op: (q: Q, ...args: A) => Promise<R>, quiet: boolean): (q: Q, ...args: A) => Promise<R> {
  if (quiet) return op;
  return async (q, ...args) => {
    const before = state(q).named;
    const result = await op(q, ...args);
    if (state(q).named === before) state(q).anyStore = true;
    return result;
  };
}

/**
 * Called before the commit of every outermost write: a transaction that owes a notice for any
 * store sends it now (one round trip; a version's notice rode on its own statement).
 */
export async function publishAtCommit(c: pg.PoolClient, origin: string): Promise<void> {
  const owed = published.get(c)?.anyStore === true;
  published.delete(c);
  // Through db.ts, so a BEGIN or RELEASE it holds back goes out first; in a mount's write it rides with the COMMIT.
  if (owed) await runWithNext(c, 'SELECT pg_notify($1, $2)', [CHANNEL, `c ${origin} * 0`]);
}

/** A session was ended: its node unmounts it when it hears this (and at its start in any case). */
export function publishSessionEnded(q: Q, workspaceId: string, sessionId: string): Promise<void> {
  return publish(q, 'e', workspaceId, sessionId);
}

/** An API key was revoked: every server that keeps it forgets it when it hears this. */
export function publishKeyRevoked(q: Q, workspaceId: string, keyId: string): Promise<void> {
  return publish(q, 'k', workspaceId, keyId);
}

/**
 * A version was redacted: every server's mounts drop what they keep of it (its text by `erasedSha256`
 * once no version holds it; null while one does). Sent inside the redaction's transaction, so only
 * a redaction that commits is announced.
 */
export function publishVersionRedacted(q: Q, storeId: string, versionId: string, erasedSha256: string | null): Promise<void> {
  return publish(q, 'r', storeId, versionId, erasedSha256 ?? '-');
}

/** Sends `<kind> <origin> <words…>` inside the transaction of `q` (nothing for a client of no storage). */
async function publish(q: Q, kind: string, ...words: string[]): Promise<void> {
  const origin = origins.get(q);
  if (origin === undefined) return;
  await run(q, 'SELECT pg_notify($1, $2)', [CHANNEL, [kind, origin, ...words].join(' ')]);
}

/** A payload read back; null for one this code does not know (a newer server's): ignored. */
export function parseNotice(payload: string | undefined): Notice | null {
  const [kind, origin, a, b, c] = (payload ?? '').split(' ');
  if (!origin || a === undefined || b === undefined) return null;
  if (kind === 'c') return { kind: 'change', origin, storeId: a === '*' ? null : a, seq: Number(b) };
  if (kind === 'e') return { kind: 'session_ended', origin, workspaceId: a, sessionId: b };
  if (kind === 'k') return { kind: 'key_revoked', origin, workspaceId: a, keyId: b };
  if (kind === 'r' && c !== undefined) return { kind: 'version_redacted', origin, storeId: a, versionId: b, erasedSha256: c === '-' ? null : c };
  return null;
}

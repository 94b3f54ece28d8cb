/**
 * @module Idempotent writes: the first successful answer to a request with an Idempotency-Key is kept
 * as a receipt (in the same transaction as the mutation) and replayed to every retry of the same
 * request until it expires; the same key on a different request is a 409 `idempotency_conflict`.
 */
import { createHash } from 'node:crypto';
import { MnemoError, excerpt } from '../domain/errors.js';
import { createGroupCommit, type GroupCommit } from './group-commit.js';
import { eraseSearchRemnants } from './erasure.js';
import type { Receipt, ReceiptScope, Storage } from '../storage/port.js';

/** The answer a receipt keeps: status, wire body, and what it points at (for `mnemo check`). */
export interface Reply {
  status: number;
  body: unknown;
  storeId?: string | null;
  versionId?: string | null;
}

export interface IdempotentRequest {
  scope: ReceiptScope;
  /** sha256 of the normalised request (see `fingerprint`). */
  fingerprint: string;
}

export interface IdempotencyOptions<Ops> {
  storage: Storage;
  /** The service's operations over a transaction's `tx`, handed to each mutation so it commits with its receipt. */
  over: (tx: Storage) => Ops;
  /** Where mutations commit (one made over `storage` if not given): concurrent ones share an fsync. */
  writes?: GroupCommit;
  clock?: () => string;
  /** How long a receipt is replayed, in seconds (MNEMO_IDEMPOTENCY_TTL_SECONDS; default 24 h). */
  ttlSeconds?: number;
  /**
   * Told once a group has committed, for each store a write in it changed. The operations' own
   * wake-up fires inside the group's transaction, before its commit, where a follower reading at
   * once finds nothing new; this one is after, so followers need not wait for their next poll.
   */
  committed?: (storeId: string) => void;
}

export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
const PURGE_EVERY_MS = 60_000;

/**
 * The normalised request: JSON with object keys sorted at every depth, so key order and whitespace
 * in the body or the order of query parameters do not make two equal requests differ.
 */
export function fingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request), 'utf8').digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Keeps a receipt inside a caller's own transaction (sessions), or takes it back there. */
export interface ReceiptHooks<T> {
  record(value: T, tx: Storage): Promise<void>;
  forget(tx: Storage): Promise<void>;
}

export function createIdempotency<Ops>({
  storage,
  over,
  writes = createGroupCommit(storage),
  clock = () => new Date().toISOString(),
  ttlSeconds = DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  committed = () => {},
}: IdempotencyOptions<Ops>) {
  const inFlight = new Map<string, Promise<unknown>>();
  let lastPurge = 0;

  function toReceipt(req: IdempotentRequest, reply: Reply): Receipt {
    const now = clock();
    return {
      ...req.scope,
      fingerprint: req.fingerprint,
      status: reply.status,
      body: JSON.stringify(reply.body),
      storeId: reply.storeId ?? null,
      versionId: reply.versionId ?? null,
      createdAt: now,
      expiresAt: shifted(now, ttlSeconds),
    };
  }

  /** `now` moved by `seconds` (RFC 3339 UTC, as receipts store their times). */
  const shifted = (now: string, seconds: number) => new Date(Date.parse(now) + seconds * 1000).toISOString();

  async function purge(): Promise<number> {
    lastPurge = Date.now();
    const now = clock();
    // Receipts kept under a longer retention (before a restart that lowered it) go by this one's.
    return storage.purgeReceipts(now, shifted(now, ttlSeconds));
  }

  async function findIn(s: Storage, req: IdempotentRequest): Promise<Reply | null> {
    const r = await s.findReceipt(req.scope);
    const now = clock();
    // The retention in force decides, from the receipt's creation: one stored under a longer one
    // (before a restart that lowered MNEMO_IDEMPOTENCY_TTL_SECONDS) replays no longer than it allows.
    if (!r || r.expiresAt <= now || r.createdAt <= shifted(now, -ttlSeconds)) return null;
    if (r.fingerprint !== req.fingerprint) {
      throw new MnemoError(
        'idempotency_conflict',
        `Idempotency-Key ${JSON.stringify(excerpt(req.scope.key))} was already used for a different request to ${req.scope.route}; use a new key`,
      );
    }
    return { status: r.status, body: JSON.parse(r.body) as unknown, storeId: r.storeId, versionId: r.versionId };
  }

  async function recordIn(s: Storage, req: IdempotentRequest, reply: Reply): Promise<void> {
    // An expired receipt not purged yet still holds the primary key.
    await s.deleteReceipt(req.scope);
    await s.insertReceipt(toReceipt(req, reply));
  }

  /** Runs the mutation over `s` and records its reply in one transaction (without a key: just runs it). */
  async function commitIn(s: Storage, req: IdempotentRequest | null, mutate: (ops: Ops) => Promise<Reply>): Promise<Reply> {
    if (!req) return mutate(over(s));
    return s.atomic(async (tx) => {
      const reply = await mutate(over(tx));
      await recordIn(tx, req, reply);
      return reply;
    });
  }

  const api = {
    /** The live receipt for this request, or null; throws `idempotency_conflict` if the key answered another request. */
    find: (req: IdempotentRequest): Promise<Reply | null> => findIn(storage, req),

    /** Hooks that record `reply(value)` for `req`, or take it back, inside the caller's transaction (a session's). */
    hooks<T>(req: IdempotentRequest, reply: (value: T) => Reply): ReceiptHooks<T> {
      return {
        record: (value, tx) => recordIn(tx, req, reply(value)),
        forget: (tx) => tx.deleteReceipt(req.scope),
      };
    },

    /** Runs a mutation (over the transaction's operations) and records its reply in one transaction. */
    async commit(req: IdempotentRequest | null, mutate: (ops: Ops) => Promise<Reply>): Promise<Reply> {
      if (Date.now() - lastPurge > PURGE_EVERY_MS) await purge();
      const reply = await commitIn(storage, req, mutate);
      await eraseSearchRemnants(storage);
      return reply;
    },

    /**
     * A mutation through group commit: replays a stored reply, or runs it and records its reply,
     * both at its turn in the group, so concurrent retries with one key still run it once.
     */
    async settle(req: IdempotentRequest | null, mutate: (ops: Ops) => Promise<Reply>): Promise<{ reply: Reply; replayed: boolean }> {
      if (Date.now() - lastPurge > PURGE_EVERY_MS) await purge();
      const settled = await writes.run(async (tx) => {
        const found = req && (await findIn(tx, req));
        return found ? { reply: found, replayed: true } : { reply: await commitIn(tx, req, mutate), replayed: false };
      });
      // A redaction in the group left its search-index erasure for after the commit (service/erasure.ts).
      await eraseSearchRemnants(storage);
      if (!settled.replayed && settled.reply.storeId) committed(settled.reply.storeId);
      return settled;
    },

    /** Serialises requests with the same key, so concurrent retries of an async mutation run it once. */
    async exclusive<T>(req: IdempotentRequest | null, fn: () => Promise<T>): Promise<T> {
      if (!req) return fn();
      const id = JSON.stringify(req.scope);
      for (let prior = inFlight.get(id); prior; prior = inFlight.get(id)) await prior.catch(() => {});
      const run = fn();
      inFlight.set(id, run);
      try {
        return await run;
      } finally {
        if (inFlight.get(id) === run) inFlight.delete(id);
      }
    },

    purge,
  };
  return api;
}

export type Idempotency<Ops = unknown> = ReturnType<typeof createIdempotency<Ops>>;

/**
 * @module Idempotent writes: the first successful answer to a request with an Idempotency-Key is kept
 * as a receipt (in the same transaction as the mutation) and replayed to every retry of the same
 * request until it expires; the same key on a different request is a 409 `idempotency_conflict`.
 */
import { createHash } from 'node:crypto';
import { MnemoError } from '../domain/errors.js';
import { createGroupCommit, type GroupCommit } from './group-commit.js';
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

export interface IdempotencyOptions {
  storage: Storage;
  /** Where mutations commit (one made over `storage` if not given): concurrent ones share an fsync. */
  writes?: GroupCommit;
  clock?: () => string;
  /** How long a receipt is replayed, in seconds (MNEMO_IDEMPOTENCY_TTL_SECONDS; default 24 h). */
  ttlSeconds?: number;
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

export function createIdempotency({
  storage,
  writes = createGroupCommit(storage),
  clock = () => new Date().toISOString(),
  ttlSeconds = DEFAULT_IDEMPOTENCY_TTL_SECONDS,
}: IdempotencyOptions) {
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
      expiresAt: new Date(Date.parse(now) + ttlSeconds * 1000).toISOString(),
    };
  }

  function purge(): number {
    lastPurge = Date.now();
    return storage.purgeReceipts(clock());
  }

  const api = {
    /** The live receipt for this request, or null; throws `idempotency_conflict` if the key answered another request. */
    find(req: IdempotentRequest): Reply | null {
      const r = storage.findReceipt(req.scope);
      if (!r || r.expiresAt <= clock()) return null;
      if (r.fingerprint !== req.fingerprint) {
        throw new MnemoError(
          'idempotency_conflict',
          `Idempotency-Key ${JSON.stringify(req.scope.key)} was already used for a different request to ${req.scope.route}; use a new key`,
        );
      }
      return { status: r.status, body: JSON.parse(r.body) as unknown, storeId: r.storeId, versionId: r.versionId };
    },

    /** Stores the receipt; call it inside the transaction of the mutation it answers. */
    record(req: IdempotentRequest, reply: Reply): void {
      // An expired receipt not purged yet still holds the primary key.
      storage.deleteReceipt(req.scope);
      storage.insertReceipt(toReceipt(req, reply));
    },

    forget(req: IdempotentRequest): void {
      storage.deleteReceipt(req.scope);
    },

    /** Runs a synchronous mutation and records its reply in one transaction (without a key: just runs it). */
    commit(req: IdempotentRequest | null, mutate: () => Reply): Reply {
      if (Date.now() - lastPurge > PURGE_EVERY_MS) purge();
      if (!req) return mutate();
      return storage.atomic(() => {
        const reply = mutate();
        api.record(req, reply);
        return reply;
      });
    },

    /**
     * A synchronous mutation through group commit: replays a stored reply, or runs it and records its
     * reply, both at its turn in the group, so concurrent retries with one key still run it once.
     */
    settle(req: IdempotentRequest | null, mutate: () => Reply): Promise<{ reply: Reply; replayed: boolean }> {
      return writes.run(() => {
        const found = req && api.find(req);
        return found ? { reply: found, replayed: true } : { reply: api.commit(req, mutate), replayed: false };
      });
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

export type Idempotency = ReturnType<typeof createIdempotency>;

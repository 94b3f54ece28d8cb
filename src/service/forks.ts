/**
 * @module Forks (issue 15): a new store holding another's memories as they were at an instant,
 * same paths and texts, each one `created` version in the new store, sharing the stored texts
 * (content is stored once: no bytes are copied for versions). A copy keeps its memory's expiry, so
 * a memory expired by the fork (at the instant or since) is not copied (port/forks.ts).
 *
 * Built hidden, in bounded batches, then published in one transaction (port/forks.ts): each batch
 * is a short transaction of its own and the event loop gets a turn between batches, so a fork of
 * 10,000 memories never holds the SQLite writer (or a PostgreSQL store lock) long enough to stall a
 * mount, and nobody sees the fork half-made. One long transaction would be atomic too, but would
 * block every mount write of the server for its whole length. A fork that fails part-way is
 * deleted; one cut short by a crash stays hidden, unseen by every read, until the minute sweep
 * deletes it an hour later (`purgeAbandonedForks`). A build deleted while it ran is built again
 * when a redaction deleted it, and a request whose builds a redaction abandoned FORK_ATTEMPTS times
 * fails 409 `conflict`; one the sweep deleted (still running an hour on) fails 409 at once. Either
 * 409 is about the source, and names its cause: the builds' ids were never given out.
 */
import { assertMayCreateStores } from '../domain/access.js';
import { forkAbandonedBy, MnemoError, notFound, type ForkAbandonment } from '../domain/errors.js';
import type { Caller, Store } from '../domain/types.js';
import type { Storage } from '../storage/port.js';
import { assertPast, type ForkRequest } from '../validate/index.js';
import type { Durability } from './durability.js';
import type { ReceiptHooks } from './idempotency.js';
import type { IdGenerator } from './ids.js';
import { assertForkRoom, type StoreLimits } from './limits.js';

/**
 * Source memories one batch transaction looks at: about 6 ms of the SQLite writer on a loaded
 * 2-core host (the bench's fork figure: 200 held it for 40 ms, and a mount's stat p99 went to 180 ms).
 */
export const FORK_BATCH = 25;

/** Builds of one fork request, each abandoned by a redaction of a version it copied, before the request fails (one the sweep abandoned fails it at once). */
export const FORK_ATTEMPTS = 3;

/** A hidden fork older than this was cut short by a crash (a live fork of 10,000 memories takes seconds). */
export const ABANDONED_FORK_MS = 60 * 60 * 1000;

/**
 * A fork request given up, its last build deleted while it ran by `by`, as the storage recorded it.
 * After a redaction (its FORK_ATTEMPTS-th build): 409, retryable (the next build leaves the redacted
 * versions' memories out, so it may well be published). After the sweep of forks a crash cut short
 * (the build still ran an hour after the request began, so the sweep took it for one): 409 at once,
 * not retryable (another build would take as long, and its hour would be counted from the same start).
 */
function forkGivenUp(sourceId: string, by: ForkAbandonment): MnemoError {
  if (by === 'sweep') {
    return new MnemoError(
      'conflict',
      `the fork of memory store ${sourceId} was abandoned: its build was still running an hour after the request began, so the sweep of forks a crash cut short deleted it; no store was made, and the same request may take as long again`,
      { abandoned_by: by },
    );
  }
  return new MnemoError(
    'conflict',
    `the fork of memory store ${sourceId} was abandoned ${FORK_ATTEMPTS} times: each build lost a version it copied to a redaction while it ran; no store was made, and the same request may be tried again`,
    { transient: true, abandoned_by: by },
  );
}

export interface ForksOptions {
  storage: Storage;
  clock: () => string;
  ids: IdGenerator;
  /** The store a caller may see (404 otherwise). */
  readable: (caller: Caller, id: string) => Promise<Store>;
  /** The store limits in force: a fork holding more than they allow is refused (limits.ts). */
  limits: StoreLimits;
  /** Runs one batch's transaction not durable at its commit, the background sync armed for it (durability.ts). */
  relaxed: Durability['relaxed'];
  /** Gives other work its turn between batches (default: a macrotask, setImmediate). */
  yieldTurn?: () => Promise<void>;
  batch?: number;
}

export function createForks({ storage, clock, ids, readable, limits, relaxed, yieldTurn = () => new Promise((r) => setImmediate(r)), batch = FORK_BATCH }: ForksOptions) {
  return {
    /** Deletes forks a crash cut short, one store per transaction (the server runs it every minute); returns how many. */
    async purgeAbandonedForks(): Promise<number> {
      const now = clock();
      const before = new Date(Date.parse(now) - ABANDONED_FORK_MS).toISOString();
      let n = 0;
      while ((await storage.purgeAbandonedFork(before, now)) !== null) {
        n += 1;
        await yieldTurn();
      }
      return n;
    },

    async forkStore(caller: Caller, sourceId: string, req: ForkRequest, hooks?: ReceiptHooks<Store>): Promise<Store> {
      const source = await readable(caller, sourceId);
      // A fork is a new store of the caller's workspace: the right to create one (a key scoped to
      // some stores has none), with read on the source (readable above).
      assertMayCreateStores(caller);
      const now = clock();
      const asOf = req.asOf === null ? now : assertPast(req.asOf, now, 'as_of');
      if (asOf < source.createdAt) {
        throw new MnemoError('invalid_request', `as_of ${asOf} is before memory store ${source.id} was created (${source.createdAt}): there is nothing to fork`, { field: 'as_of' });
      }
      // A redaction of a version the fork copies, while it is built, abandons the fork
      // (storage/*/versions.ts): it is built again, under a new id, and this time leaves that memory
      // out. The sweep of forks a crash cut short abandons one still running an hour after the
      // request began: another build would be as old to the sweep (its `forking_since` is the
      // store's `createdAt`, this request's instant), so the request fails at once.
      for (let attempt = 1; ; attempt += 1) {
        const store: Store = {
          id: ids('store'), workspaceId: caller.workspaceId, name: req.name, description: req.description, metadata: req.metadata,
          createdAt: now, updatedAt: now, archivedAt: null, forkedFrom: { storeId: source.id, asOf },
        };
        try {
          return await buildFork(caller, source, store, asOf, now, hooks);
        } catch (err) {
          // The storage says so, and who deleted it (port/forks.ts); any other error, a not_found
          // naming this build's store included, is the request's answer.
          const by = forkAbandonedBy(err, store.id);
          if (by === null) throw err;
          // The build's own id was never given out: a 404 naming it would point at nothing the caller knows.
          if (by === 'sweep' || attempt >= FORK_ATTEMPTS) throw forkGivenUp(source.id, by);
        }
      }
    },
  };

  async function buildFork(caller: Caller, source: Store, store: Store, asOf: string, now: string, hooks: ReceiptHooks<Store> | undefined): Promise<Store> {
    await storage.beginFork(store);
    try {
      let after: string | null = null;
      do {
        const from: string | null = after;
        // Not durable on its own (no fsync per batch): nothing sees the rows before the publish,
        // whose durable commit puts every batch before it on disk too. The background sync is
        // armed all the same: until it runs, the batches count as commits not on disk.
        after = await relaxed(async (tx) => {
          const next = await tx.copyForkBatch({
            sourceId: source.id, targetId: store.id, asOf, after: from, limit: batch, actor: caller.actor, now,
            newMemoryId: () => ids('memory'), newVersionId: () => ids('version'),
          });
          // The copy so far against the limits in force (one row, the usage counter): a fork past
          // them stops at the batch that crosses them, and is deleted as any failed fork is.
          assertForkRoom(limits, source.id, await tx.storeUsage(store.id));
          return next;
        });
        if (after !== null) await yieldTurn();
      } while (after !== null);
      return await storage.atomic(async (tx) => {
        // The source deleted meanwhile (its rows are removed in steps, so the batches could still
        // read them): no fork of a store that is gone.
        if (!(await tx.getStore(source.workspaceId, source.id))) throw notFound('memory store', source.id);
        const published = await tx.publishFork(store.id);
        await hooks?.record(published, tx);
        return published;
      });
    } catch (err) {
      await storage.abandonFork(store.id);
      throw err;
    }
  }
}

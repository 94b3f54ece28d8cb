/**
 * @module The forks role: a new store holding another's memories as of an instant, built in
 * bounded batches while hidden, then published in one step (a fork is never seen half-made).
 */
import type { Actor, Store } from '../../domain/types.js';

export interface ForkBatchInput {
  sourceId: string;
  targetId: string;
  /** The instant whose memories are copied (RFC 3339). */
  asOf: string;
  /** The last source memory id a previous batch looked at (null: start). */
  after: string | null;
  /** How many source memories this batch looks at, at most. */
  limit: number;
  actor: Actor;
  now: string;
  newMemoryId: () => string;
  newVersionId: () => string;
}

export interface ForkStorage {
  /** Inserts `store` hidden: no read of stores finds it until `publishFork`. */
  beginFork(store: Store): Promise<void>;
  /**
   * In one transaction: each of up to `limit` source memories (by id, after `after`) that was live
   * at `asOf`, with a version not redacted since, becomes a memory of the hidden target at the same
   * path with the same text and one `created` version; the text is shared, not copied
   * (`contents`). The copy keeps the memory's `expires_at`, so a memory that has expired by `now`
   * (at `asOf`, or since, whether or not a sweep deleted it yet) is not copied. Returns the last
   * memory id looked at, or null once the source has no more.
   *
   * A target no longer hidden and there to build (deleted while it was built: a redaction of a
   * version it copies, or is to copy, abandons it, and so does the sweep below) throws
   * `abandonedFork(targetId, by)` (domain/errors.ts), and nothing else does. `by` is who deleted it,
   * as its deletion recorded in its own transaction (`redaction` or `sweep`), found even once the
   * store's rows are purged; a record is kept an hour (the sweep below forgets older ones), so a
   * build that finds none has outlasted the hour the sweep gives a build, and `by` is `sweep`.
   */
  copyForkBatch(input: ForkBatchInput): Promise<string | null>;
  /** Makes the hidden store visible; returns it as stored. One deleted while it was built throws `abandonedFork(storeId, by)`, as copyForkBatch. */
  publishFork(storeId: string): Promise<Store>;
  /**
   * Deletes a hidden store (a fork that failed part-way), as `deleteStore` does; a published store is
   * left alone. Forgets who deleted it, if anyone did while it was built: its build has given it up.
   */
  abandonFork(storeId: string): Promise<void>;
  /**
   * Deletes one hidden store whose fork began before `before` (a fork cut short by a crash: a live
   * one takes seconds), recording in the same transaction that the sweep did, at `now`; returns its
   * id, or null when there is none. Forgets first what was recorded before `before` of builds
   * deleted while they ran (a build whose process died never reads its own).
   */
  purgeAbandonedFork(before: string, now: string): Promise<string | null>;
  /** How many distinct texts the database stores (content is stored once): for tests and the bench. */
  countContents(): Promise<number>;
}

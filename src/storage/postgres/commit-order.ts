/**
 * @module The one place the PostgreSQL adapter appends a version row (memory writes, the expiry
 * purge, forks): it takes the store's next commit number in the write's own transaction (invariant
 * 14, postgres/schema/v2.ts). The UPDATE's row lock is held to the commit, so writers of one store,
 * on any host, commit in the order of their numbers; a rollback gives the number back. The same
 * lock serialises taking `path_seq`, the version's number at its path (postgres/schema/v4.ts).
 *
 * One statement, one round trip, for everything the version changes: its text, the counter, the
 * notice, the version row, and the memory row beside it (`mnemo_append`, postgres/schema/v10.ts).
 * A directory move appends a page of versions in one (`mnemo_append_moves`, postgres/schema/v16.ts and v19.ts).
 */
import type { VersionRowInput } from '../common/version-rows.js';
import { pathHash } from './path-floors.js';
import { run, runWithNext, type Q } from './db.js';
import { CHANNEL, noticeOfCommit } from './notify.js';

/** What the memory row does beside the version: its columns for an insert or an update. */
export type MemoryRowChange =
  | { kind: 'none' | 'delete' }
  | {
      kind: 'insert' | 'update';
      mode: number;
      updatedAt: string;
      expiresAt: string | null;
      atimeUs: number | null;
      mtimeUs: number | null;
      uid: number | null;
      gid: number | null;
    };

/**
 * Call it inside a write transaction (the store row is locked by then or by this statement). The
 * memory row written here has no tsvector yet: it waits in the search backlog (postgres/search-index.ts).
 */
export async function appendVersionRow(q: Q, r: VersionRowInput, row: MemoryRowChange = { kind: 'none' }): Promise<void> {
  // The cross-host wake-up rides on the counter (notify.ts): delivered only if this commits.
  const notice = noticeOfCommit(q, r.storeId);
  const m = row.kind === 'insert' || row.kind === 'update' ? row : null;
  // Nothing reads its result: it rides with the transaction's next statement or its COMMIT (db.ts).
  await runWithNext(
    q,
    'SELECT mnemo_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)',
    [
      r.id, r.storeId, r.memoryId, r.operation, r.path, r.content, r.sha, r.size, r.createdAt, r.actorType, r.actorId, pathHash(r.path),
      CHANNEL, notice, row.kind, m?.mode ?? null, m?.updatedAt ?? null, m?.expiresAt ?? null, m?.atimeUs ?? null, m?.mtimeUs ?? null,
      m?.uid ?? null, m?.gid ?? null,
    ],
  );
}

/** What a guarded create checks before it appends (postgres/schema/v17.ts): the probe's overlap arguments and the usage the service admits. */
export interface CreateGuard {
  workspaceId: string;
  clock: string;
  above: string[];
  below: string;
  belowEnd: string;
  clearBelow: { memories: number; bytes: number };
}

/**
 * A create as one statement that probes and appends, or refuses with SQLSTATE MNG01 when anything
 * the create decides on is not as it needs (`mnemo_create_guarded`). Held like an append: it goes
 * out with the transaction's next statement or its COMMIT, and a refusal aborts the transaction,
 * which `inTransaction` (db.ts) runs again without guards.
 */
export async function appendGuardedCreate(q: Q, g: CreateGuard, r: VersionRowInput, row: Extract<MemoryRowChange, { kind: 'insert' | 'update' }>): Promise<void> {
  await runWithNext(
    q,
    'SELECT mnemo_create_guarded($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)',
    [
      g.workspaceId, g.clock, g.above, g.below, g.belowEnd, g.clearBelow.memories, g.clearBelow.bytes,
      r.id, r.storeId, r.memoryId, r.path, r.content, r.sha, r.size, r.createdAt, r.actorType, r.actorId, pathHash(r.path),
      CHANNEL, noticeOfCommit(q, r.storeId), row.mode, row.expiresAt, row.atimeUs, row.mtimeUs, row.uid, row.gid,
    ],
  );
}

/** One memory of a directory move, as the move leaves it: a new path, the same text. */
export interface MovedRow {
  versionId: string;
  memoryId: string;
  path: string;
  sha: string;
  size: number;
  mode: number;
  expiresAt: string | null;
  atimeUs: number | null;
  mtimeUs: number | null;
  uid: number | null;
  gid: number | null;
}

/**
 * A page of a directory move's versions and rows in one statement, taking the page's commit
 * numbers with one update of the store's row (postgres/schema/v16.ts: updating it once per version
 * made a big move's cost grow with the square of its size). Call it inside the move's transaction.
 */
export async function appendMovedVersions(q: Q, storeId: string, stamp: { createdAt: string; actorType: string; actorId: string }, rows: readonly MovedRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof MovedRow>(k: K) => rows.map((r) => r[k]);
  await run(
    q,
    'SELECT mnemo_append_moves($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)',
    [
      storeId, stamp.createdAt, stamp.actorType, stamp.actorId, CHANNEL, noticeOfCommit(q, storeId),
      col('versionId'), col('memoryId'), col('path'), rows.map((r) => pathHash(r.path)), col('sha'), col('size'),
      col('mode'), col('expiresAt'), col('atimeUs'), col('mtimeUs'), col('uid'), col('gid'),
    ],
  );
}

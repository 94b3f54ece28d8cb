/**
 * @module PostgreSQL operations for memory versions: filtered newest-first lists and redaction.
 * Redaction nulls the version's text (the append-only trigger allows exactly that) and rewrites
 * the receipts naming it, in one transaction. PostgreSQL has no secure delete: see the README's
 * "PostgreSQL" section for where the old bytes stay.
 */
import { assertStoreFound } from '../../domain/memory-rules.js';
import { planRedaction } from '../../domain/version-rules.js';
import type { Actor, MemoryVersion, Page, TextHolderQuery, TextHolders, VersionListQuery } from '../../domain/types.js';
import { cursorNumber, decodeCursor, encodeCursor } from '../cursor.js';
import { all, first, lookup, run, type Q } from './db.js';
import { redactReceipts } from './receipts.js';
import { HOLDERS_IN_WORKSPACE, versionContent } from './contents.js';
import { purgeExpiredMemory } from './expiry.js';
import { lockStore } from './memories.js';
import { publishVersionRedacted } from './notify.js';
import { keepFloor } from './path-floors.js';
import { actorColumns, byUniqueId, toTextHolders, toVersion, type TextHolderRow, type VersionRow } from './rows.js';

const BASIC =
  'seq, id, store_id, memory_id, operation, path, NULL AS content, content_sha256, content_size_bytes, created_at, actor_type, actor_id, redacted_at, redacted_by_type, redacted_by_id';

export const versionReads = {
  async getVersion(q: Q, storeId: string, id: string): Promise<MemoryVersion | null> {
    const r = await lookup<VersionRow>(q, `SELECT v.*, ${versionContent('v')} AS content FROM ${byUniqueId('versions', 2, 'v')} WHERE v.store_id = $1`, [storeId, id]);
    return r ? toVersion(r) : null;
  },

  async listVersions(q: Q, storeId: string, lq: VersionListQuery): Promise<Page<MemoryVersion>> {
    const c = decodeCursor(lq.page);
    const params: unknown[] = [storeId, c ? cursorNumber(c, 's') : Number.MAX_SAFE_INTEGER];
    const where = ['store_id = $1', 'seq < $2'];
    const add = (sql: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (lq.memoryId !== null) add((n) => `memory_id = ${n}`, lq.memoryId);
    if (lq.operation !== null) add((n) => `operation = ${n}`, lq.operation);
    if (lq.sessionId !== null) add((n) => `actor_type = 'session_actor' AND actor_id = ${n}`, lq.sessionId);
    if (lq.apiKeyId !== null) add((n) => `actor_type = 'api_actor' AND actor_id = ${n}`, lq.apiKeyId);
    // No service accounts write here, so that filter matches nothing.
    if (lq.serviceAccountId !== null) where.push('false');
    if (lq.createdGte !== null) add((n) => `created_at >= ${n}`, lq.createdGte);
    if (lq.createdLte !== null) add((n) => `created_at <= ${n}`, lq.createdLte);
    params.push(lq.limit + 1);
    const rows = await all<VersionRow>(
      q,
      `SELECT ${lq.view === 'full' ? `*, ${versionContent('versions')} AS content` : BASIC} FROM versions WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, lq.limit);
    return { data: page.map(toVersion), nextPage: rows.length > lq.limit ? encodeCursor({ s: page[page.length - 1]!.seq }) : null };
  },

  async listTextHolders(q: Q, storeId: string, sha256: string, hq: TextHolderQuery): Promise<TextHolders> {
    const rows = await all<TextHolderRow & { count: number }>(q, HOLDERS_IN_WORKSPACE, [sha256, storeId, hq.now, hq.only === null ? null : [...hq.only], hq.limit + 1]);
    return toTextHolders(rows.filter((r) => r.id !== null), hq.limit, rows[0]?.count ?? 0);
  },
};

export const versionWrites = {
  async redactVersion(q: Q, storeId: string, id: string, actor: Actor, now: string): Promise<MemoryVersion> {
    // Locked as a write does: a redaction that raced the store's delete finds it gone and changes nothing.
    assertStoreFound(storeId, await lockStore(q, storeId));
    // The row lock orders two redactions of one version (the second finds it redacted) and a
    // redaction against the write that would make the version a head again (there is none: heads only move forward).
    const found = await first<VersionRow>(q, 'SELECT *, NULL AS content FROM versions WHERE store_id = $1 AND id = $2 FOR UPDATE', [storeId, id]);
    const head =
      found !== undefined &&
      found.redacted_at === null &&
      (await first(q, 'SELECT 1 FROM memories WHERE id = $1 AND version_id = $2', [found.memory_id, id])) !== undefined;
    // The head of a memory whose expiry has passed is no live memory's (reads find none): the
    // memory is deleted now, as the sweep would, and its current text can go at once.
    const isHead = head && !(await purgeExpiredMemory(q, storeId, found.memory_id, now));
    const plan = planRedaction(id, found ? { memoryId: found.memory_id, redactedAt: found.redacted_at } : null, isHead);
    // planRedaction threw not_found when there was no row.
    const row = found as VersionRow;
    if (plan === 'already') return toVersion(row);
    // A fork still being built that copies, or is to copy, this version is abandoned and built again
    // without it (service/forks.ts). Its batches lock its row (FOR NO KEY UPDATE): a batch that read
    // this version before this commit is waited for, and a later one finds the fork gone.
    // Each deleted build's cause is recorded with it (postgres/schema/v27.ts), so its request fails
    // with the right reason should this be its last try.
    await run(
      q,
      `WITH abandoned AS (
         UPDATE stores f SET deleted_at = $4
         WHERE f.forking_since IS NOT NULL AND f.deleted_at IS NULL AND (f.forked_from::jsonb ->> 'storeId') = $1
           AND (SELECT v.id FROM versions v WHERE v.store_id = $1 AND v.memory_id = $2 AND v.created_at <= (f.forked_from::jsonb ->> 'asOf')
                ORDER BY v.created_at DESC, v.seq DESC LIMIT 1) = $3
         RETURNING f.id)
       INSERT INTO fork_abandonments (store_id, cause, abandoned_at) SELECT id, 'redaction', $4 FROM abandoned ON CONFLICT (store_id) DO NOTHING`,
      [storeId, row.memory_id, id, now],
    );
    const a = actorColumns(actor);
    await run(
      q,
      `UPDATE versions SET path = NULL, content_sha256 = NULL, content_size_bytes = NULL,
         redacted_at = $1, redacted_by_type = $2, redacted_by_id = $3
       WHERE id = $4`,
      [now, a.type, a.id, id],
    );
    // Receipts replaying this version's memory hold its text too: same transaction (invariant 9).
    await redactReceipts(q, storeId, id);
    // The path goes, its number stays taken (postgres/schema/v7.ts).
    if (row.path !== null && row.path_seq != null) await keepFloor(q, storeId, row.path, Number(row.path_seq));
    // An expired memory's last path stays in memory_expirations; once no version holds it, it is redacted text too.
    if (row.path !== null) {
      await run(
        q,
        `UPDATE memory_expirations SET path = '' WHERE store_id = $1 AND memory_id = $2 AND path = $3
           AND NOT EXISTS (SELECT 1 FROM versions WHERE store_id = $1 AND memory_id = $2 AND path = $3)`,
        [storeId, row.memory_id, row.path],
      );
    }
    // The text's row went with its last holder in that UPDATE (a trigger: postgres/schema/v5.ts). Whether
    // it went is one key probe; how many versions still hold it grows with them, and is read once this
    // has committed (listTextHolders, asked by the service's textHolders), not in this transaction.
    const sha = row.content_sha256;
    const gone = sha !== null && (await first(q, 'SELECT 1 FROM contents WHERE sha256 = $1', [sha])) === undefined;
    const after = toVersion((await first<VersionRow>(q, 'SELECT *, NULL AS content FROM versions WHERE id = $1', [id]))!);
    // The other servers' mounts keep copies too (their content caches, the kernel's pages).
    await publishVersionRedacted(q, storeId, id, gone ? sha : null);
    return { ...after, erased: { sha256: sha, gone } };
  },
};

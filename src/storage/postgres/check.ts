/**
 * @module `mnemo check` on PostgreSQL. The engine's own check is a set of sanity queries (no
 * amcheck: it needs superuser or grants an operator may not give): every index valid, every
 * foreign key and trigger the schema declares in place and enabled. The domain check applies the
 * same invariants as SQLite's (sqlite/check.ts), except the search index's: a row's words are
 * filled from the backlog (search-index.ts), and search computes a still-queued row's own, so no
 * state of it can mislead a search. Its queries are this file's, the rules that read their
 * rows are both engines' (common/check-rules.ts).
 */
import {
  checkBundle, checkCheckpointHead, checkReceipt, checkVersionPath, MAX_REPORTED, MISSING_CONTENT_TIMES_SQL, memoryCheck, problemList,
  reportMisHashedContent, reportMissingContent, reportMissingContentTimes, reportUnheldContent, reportUsageMismatch,
  type HeadCheckRow, type HeadVersionRow, type ReceiptCheckRow, type Report, type UsageMismatchRow,
} from '../common/check-rules.js';
import { versionContent } from './contents.js';
import { all, type Q } from './db.js';
import type { MemoryRow } from './rows.js';

/** Rows read per round trip while the check walks a table. */
const PAGE = 1000;

const TRIGGERS = ['versions_append_only_delete', 'versions_append_only_update', 'versions_no_truncate', 'checkpoints_immutable',
  'store_usage_insert', 'store_usage_delete', 'store_usage_resize',
  // Migration 2 (postgres/schema/v2.ts): commit order, checkpoints' version references, the admin-actions log.
  'versions_commit_order', 'checkpoint_version_refs_insert', 'checkpoint_version_refs_delete',
  'admin_actions_append_only_update', 'admin_actions_no_truncate',
  // Migration 5 (postgres/schema/v5.ts): content stored once.
  'contents_immutable', 'contents_release_on_redaction', 'contents_release_on_delete',
  // Migration 23 (v23.ts): a version's content time; 24 (v24.ts): checkpoints in the store's usage.
  'versions_content_times', 'store_usage_checkpoint_insert', 'store_usage_checkpoint_delete'];

export async function integrityCheck(q: Q): Promise<string[]> {
  const problems: string[] = [];
  for (const r of await all<{ name: string }>(
    q,
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready)`,
  )) {
    problems.push(`index ${r.name} is not valid (rebuild it with REINDEX INDEX ${r.name})`);
  }
  const present = new Set(
    (await all<{ name: string }>(
      q,
      `SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND NOT t.tgisinternal AND t.tgenabled <> 'D'`,
    )).map((r) => r.name),
  );
  for (const t of TRIGGERS) if (!present.has(t)) problems.push(`trigger ${t} is missing or disabled`);
  for (const r of await all<{ name: string }>(
    q,
    `SELECT conname AS name FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE n.nspname = current_schema() AND c.contype = 'f' AND NOT c.convalidated`,
  )) {
    problems.push(`foreign key ${r.name} is not validated`);
  }
  // Named for the engine, beside the domain's own findings in `mnemo check`.
  return problems.map((p) => `postgresql: ${p}`);
}

/** Every row of a query, in keyset pages on `seq` (the query takes the last seq as $1 and the page size as $2). */
async function* pages<T extends { seq: number }>(q: Q, sql: string): AsyncGenerator<T> {
  let after = 0;
  for (;;) {
    const rows = await all<T>(q, sql, [after, PAGE]);
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.seq;
  }
}

export async function domainCheck(q: Q): Promise<string[]> {
  const { problems, report } = problemList();
  await checkMemories(q, report);
  await checkContinuity(q, report);
  // Invariant 19 (postgres/schema/v5.ts): every version's text is stored, and only held text is.
  for (const r of await all<{ id: string; store_id: string }>(
    q,
    `SELECT v.id, v.store_id FROM versions v WHERE v.content_sha256 IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.sha256 = v.content_sha256) LIMIT ${MAX_REPORTED + 1}`,
  )) {
    reportMissingContent(r, report);
  }
  for (const r of await all<{ sha256: string }>(
    q,
    `SELECT c.sha256 FROM contents c WHERE NOT EXISTS (SELECT 1 FROM versions v WHERE v.content_sha256 = c.sha256) LIMIT ${MAX_REPORTED + 1}`,
  )) {
    reportUnheldContent(r.sha256, report);
  }
  // Invariant 20 (postgres/schema/v23.ts): every version carries its two times.
  for (const r of await all<{ id: string; store_id: string }>(q, MISSING_CONTENT_TIMES_SQL)) reportMissingContentTimes(r, report);
  for (const r of await all<{ sha256: string }>(q, `SELECT sha256 FROM contents WHERE encode(sha256(convert_to(content, 'UTF8')), 'hex') <> sha256 LIMIT ${MAX_REPORTED + 1}`)) {
    reportMisHashedContent(r.sha256, report);
  }
  for (const r of await all<UsageMismatchRow>(
    q,
    `SELECT s.id AS store_id, coalesce(u.memories, 0) AS kept_memories, coalesce(u.bytes, 0) AS kept_bytes, coalesce(u.checkpoint_bytes, 0) AS kept_checkpoint_bytes,
            coalesce(m.n, 0) AS memories, (coalesce(m.bytes, 0) + coalesce(c.bytes, 0))::bigint AS bytes, coalesce(c.bytes, 0)::bigint AS checkpoint_bytes
     FROM stores s LEFT JOIN store_usage u ON u.store_id = s.id
     LEFT JOIN (SELECT store_id, count(*) AS n, sum(content_size_bytes) AS bytes FROM memories GROUP BY store_id) m ON m.store_id = s.id
     LEFT JOIN (SELECT store_id, sum(size_bytes) AS bytes FROM checkpoints GROUP BY store_id) c ON c.store_id = s.id
     WHERE coalesce(u.memories, 0) <> coalesce(m.n, 0) OR coalesce(u.bytes, 0) <> coalesce(m.bytes, 0) + coalesce(c.bytes, 0)
        OR coalesce(u.checkpoint_bytes, 0) <> coalesce(c.bytes, 0)`,
  )) {
    reportUsageMismatch(r, report);
  }
  for await (const r of pages<{ seq: number; id: string; path: string }>(q, 'SELECT seq, id, path FROM versions WHERE path IS NOT NULL AND seq > $1 ORDER BY seq LIMIT $2')) {
    checkVersionPath(r, report);
  }
  for await (const r of pages<ReceiptCheckRow & { seq: number }>(
    q,
    `SELECT * FROM (SELECT row_number() OVER (ORDER BY r.workspace_id, r.api_key_id, r.route, r.idem_key) AS seq,
              r.workspace_id, r.route, r.idem_key, r.body, r.store_id, r.version_id,
              EXISTS (SELECT 1 FROM stores s WHERE s.id = r.store_id AND s.deleted_at IS NULL) AS store_exists,
              EXISTS (SELECT 1 FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id) AS version_exists,
              EXISTS (SELECT 1 FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id AND v.redacted_at IS NOT NULL) AS version_redacted
       FROM idempotency_receipts r) x WHERE seq > $1 ORDER BY seq LIMIT $2`,
  )) {
    checkReceipt(r, report);
  }
  return problems;
}

/** A memory row with its head version's columns, each prefixed `v_` (`v_id` null: no such version). */
type MemoryWithHead = MemoryRow & { content: string | null; v_id: string | null } & { [K in Exclude<keyof HeadVersionRow, 'id'> as `v_${K}`]: HeadVersionRow[K] };

async function checkMemories(q: Q, report: Report): Promise<void> {
  const check = memoryCheck(report);
  // Path order within each store, so every ancestor of a path is seen before it.
  let after: { store: string; path: string } = { store: '', path: '' };
  for (;;) {
    const rows = await all<MemoryWithHead>(
      q,
      `SELECT m.*, ${versionContent('m')} AS content, v.id AS v_id, v.memory_id AS v_memory_id, v.store_id AS v_store_id, v.operation AS v_operation, v.redacted_at AS v_redacted_at,
              v.path AS v_path, ${versionContent('v')} AS v_content, v.content_sha256 AS v_content_sha256, v.content_size_bytes AS v_content_size_bytes
       FROM memories m LEFT JOIN versions v ON v.id = m.version_id
       WHERE (m.store_id, m.path) > ($1, $2::text COLLATE "C") ORDER BY m.store_id, m.path LIMIT $3`,
      [after.store, after.path, PAGE],
    );
    for (const m of rows) {
      check(m, m.v_id === null ? null : {
        id: m.v_id, memory_id: m.v_memory_id, store_id: m.v_store_id, operation: m.v_operation, redacted_at: m.v_redacted_at,
        path: m.v_path, content: m.v_content, content_sha256: m.v_content_sha256, content_size_bytes: m.v_content_size_bytes,
      });
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { store: last.store_id, path: last.path };
  }
}

async function checkContinuity(q: Q, report: Report): Promise<void> {
  for (const h of await all<HeadCheckRow>(
    q,
    `SELECT h.store_id, h.agent_id, h.session_id, h.checkpoint_id, h.revision,
            c.revision AS ckpt_revision, c.agent_id AS ckpt_agent, c.session_id AS ckpt_session,
            (SELECT MAX(revision) FROM checkpoints m
              WHERE m.store_id = h.store_id AND m.agent_id = h.agent_id AND m.session_id = h.session_id) AS max_revision
     FROM checkpoint_heads h LEFT JOIN checkpoints c ON c.id = h.checkpoint_id AND c.store_id = h.store_id`,
  )) {
    checkCheckpointHead(h, report);
  }
  for await (const b of pages<{ seq: number; id: string; bundle: string }>(q, 'SELECT seq, id, bundle FROM checkpoints WHERE seq > $1 ORDER BY seq LIMIT $2')) {
    checkBundle(b, report);
  }
}

/**
 * @module `mnemo check` on PostgreSQL. The engine's own check is a set of sanity queries (no
 * amcheck: it needs superuser or grants an operator may not give): every index valid, every
 * foreign key and trigger the schema declares in place and enabled. The domain check applies the
 * same invariants as SQLite's (sqlite/check.ts), except the search index's, which PostgreSQL keeps
 * itself (a generated column in the row).
 */
import { byteLength, MAX_CONTENT_BYTES, sha256Hex } from '../../domain/content.js';
import { ancestors } from '../../domain/paths.js';
import { assertMemoryPath } from '../../validate/memory.js';
import { RECEIPT_VERSION_FIELDS } from '../sqlite/receipts.js';
import { versionContent } from './contents.js';
import { all, type Q } from './db.js';
import type { MemoryRow, VersionRow } from './rows.js';

const MAX_REPORTED = 200;
/** Rows read per round trip while the check walks a table. */
const PAGE = 1000;

const TRIGGERS = ['versions_append_only_delete', 'versions_append_only_update', 'versions_no_truncate', 'checkpoints_immutable',
  'store_usage_insert', 'store_usage_delete', 'store_usage_resize',
  // Migration 2 (postgres/schema/v2.ts): commit order, checkpoints' version references, the admin-actions log.
  'versions_commit_order', 'checkpoint_version_refs_insert', 'checkpoint_version_refs_delete',
  'admin_actions_append_only_update', 'admin_actions_no_truncate',
  // Migration 5 (postgres/schema/v5.ts): content stored once.
  'contents_immutable', 'contents_release_on_redaction', 'contents_release_on_delete'];

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
  return problems;
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
  const problems: string[] = [];
  const report = (line: string) => {
    if (problems.length < MAX_REPORTED) problems.push(line);
    else if (problems.length === MAX_REPORTED) problems.push('… more problems not shown');
  };
  await checkMemories(q, report);
  await checkContinuity(q, report);
  // Invariant 19 (postgres/schema/v5.ts): every version's text is stored, and only held text is.
  for (const r of await all<{ id: string; store_id: string }>(
    q,
    `SELECT v.id, v.store_id FROM versions v WHERE v.content_sha256 IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.sha256 = v.content_sha256) LIMIT ${MAX_REPORTED + 1}`,
  )) {
    report(`version ${r.id} in ${r.store_id}: its content is not stored (no contents row for its content_sha256)`);
  }
  for (const r of await all<{ sha256: string }>(
    q,
    `SELECT c.sha256 FROM contents c WHERE NOT EXISTS (SELECT 1 FROM versions v WHERE v.content_sha256 = c.sha256) LIMIT ${MAX_REPORTED + 1}`,
  )) {
    report(`content ${r.sha256}: stored, but no version holds it`);
  }
  for (const r of await all<{ sha256: string }>(q, `SELECT sha256 FROM contents WHERE encode(sha256(convert_to(content, 'UTF8')), 'hex') <> sha256 LIMIT ${MAX_REPORTED + 1}`)) {
    report(`content ${r.sha256}: its text does not hash to its key`);
  }
  for (const r of await all<{ store_id: string; kept_memories: number; kept_bytes: number; memories: number; bytes: number }>(
    q,
    `SELECT s.id AS store_id, coalesce(u.memories, 0) AS kept_memories, coalesce(u.bytes, 0) AS kept_bytes,
            coalesce(m.n, 0) AS memories, coalesce(m.bytes, 0)::bigint AS bytes
     FROM stores s LEFT JOIN store_usage u ON u.store_id = s.id
     LEFT JOIN (SELECT store_id, count(*) AS n, sum(content_size_bytes) AS bytes FROM memories GROUP BY store_id) m ON m.store_id = s.id
     WHERE coalesce(u.memories, 0) <> coalesce(m.n, 0) OR coalesce(u.bytes, 0) <> coalesce(m.bytes, 0)`,
  )) {
    report(
      `store ${r.store_id}: usage counter says ${r.kept_memories} memories / ${r.kept_bytes} bytes, the store holds ${r.memories} / ${r.bytes}` +
        ' (rebuild with: DELETE FROM store_usage; INSERT INTO store_usage SELECT store_id, count(*), sum(content_size_bytes) FROM memories GROUP BY store_id;)',
    );
  }
  for await (const r of pages<{ seq: number; id: string; path: string }>(q, 'SELECT seq, id, path FROM versions WHERE path IS NOT NULL AND seq > $1 ORDER BY seq LIMIT $2')) {
    if (!validPath(r.path)) report(`version ${r.id}: stored path ${JSON.stringify(r.path)} is not a valid memory path`);
  }
  for await (const r of pages<ReceiptCheckRow & { seq: number }>(
    q,
    `SELECT * FROM (SELECT row_number() OVER (ORDER BY r.workspace_id, r.api_key_id, r.route, r.idem_key) AS seq,
              r.workspace_id, r.route, r.idem_key, r.body, r.store_id, r.version_id,
              EXISTS (SELECT 1 FROM stores s WHERE s.id = r.store_id) AS store_exists,
              EXISTS (SELECT 1 FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id) AS version_exists,
              EXISTS (SELECT 1 FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id AND v.redacted_at IS NOT NULL) AS version_redacted
       FROM idempotency_receipts r) x WHERE seq > $1 ORDER BY seq LIMIT $2`,
  )) {
    const what = `receipt ${r.route} key ${JSON.stringify(r.idem_key)} in ${r.workspace_id}`;
    let body: unknown;
    try {
      body = JSON.parse(r.body);
    } catch {
      report(`${what}: stored body is not JSON`);
    }
    if (r.version_redacted && body !== null && typeof body === 'object') {
      const kept = RECEIPT_VERSION_FIELDS.filter((f) => (body as Record<string, unknown>)[f] != null);
      if (kept.length > 0) report(`${what}: still holds ${kept.join(', ')} of redacted version ${r.version_id}`);
    }
    if (r.version_id !== null && r.store_exists && !r.version_exists) report(`${what}: points at version ${r.version_id}, which does not exist`);
  }
  return problems;
}

interface ReceiptCheckRow {
  workspace_id: string;
  route: string;
  idem_key: string;
  body: string;
  store_id: string | null;
  version_id: string | null;
  store_exists: boolean;
  version_exists: boolean;
  version_redacted: boolean;
}

function validPath(path: string): boolean {
  try {
    assertMemoryPath(path);
    return true;
  } catch {
    return false;
  }
}

async function checkMemories(q: Q, report: (l: string) => void): Promise<void> {
  let store = '';
  let live = new Set<string>();
  // Path order within each store, so every ancestor of a path is seen before it.
  let after: { store: string; path: string } = { store: '', path: '' };
  for (;;) {
    const rows = await all<MemoryRow & { content: string; v_id: string | null } & Partial<Record<`v_${keyof VersionRow}`, unknown>>>(
      q,
      `SELECT m.*, v.id AS v_id, v.memory_id AS v_memory_id, v.store_id AS v_store_id, v.operation AS v_operation, v.redacted_at AS v_redacted_at,
              v.path AS v_path, ${versionContent('v')} AS v_content, v.content_sha256 AS v_content_sha256, v.content_size_bytes AS v_content_size_bytes
       FROM memories m LEFT JOIN versions v ON v.id = m.version_id
       WHERE (m.store_id, m.path) > ($1, $2::text COLLATE "C") ORDER BY m.store_id, m.path LIMIT $3`,
      [after.store, after.path, PAGE],
    );
    for (const m of rows) {
      if (m.store_id !== store) {
        store = m.store_id;
        live = new Set();
      }
      const what = `memory ${m.id} (${m.path}) in ${m.store_id}`;
      if (!validPath(m.path)) report(`${what}: path is not a valid memory path`);
      for (const a of ancestors(m.path)) if (live.has(a)) report(`${what}: path overlaps the live memory at ${a}`);
      live.add(m.path);
      if (/\p{Cs}/u.test(m.content)) report(`${what}: content is not well-formed Unicode`);
      const size = byteLength(m.content);
      if (size > MAX_CONTENT_BYTES) report(`${what}: content is ${size} bytes, over the ${MAX_CONTENT_BYTES}-byte limit`);
      if (sha256Hex(m.content) !== m.content_sha256) report(`${what}: content_sha256 does not match its content`);
      if (size !== m.content_size_bytes) report(`${what}: content_size_bytes ${m.content_size_bytes} does not match ${size}`);
      if (m.v_id === null) report(`${what}: head version ${m.version_id} does not exist`);
      else if (m.v_memory_id !== m.id || m.v_store_id !== m.store_id) report(`${what}: head version ${m.v_id} belongs to memory ${String(m.v_memory_id)}`);
      else if (m.v_operation === 'deleted') report(`${what}: head version ${m.v_id} is a deletion`);
      else if (m.v_redacted_at !== null) report(`${what}: head version ${m.v_id} is redacted`);
      else if (m.v_path !== m.path || m.v_content !== m.content || m.v_content_sha256 !== m.content_sha256 || m.v_content_size_bytes !== m.content_size_bytes) {
        report(`${what}: head version ${m.v_id} does not hold the memory's path and content`);
      }
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { store: last.store_id, path: last.path };
  }
}

async function checkContinuity(q: Q, report: (l: string) => void): Promise<void> {
  for (const h of await all<{
    store_id: string; agent_id: string; session_id: string; checkpoint_id: string; revision: number;
    ckpt_revision: number | null; ckpt_agent: string | null; ckpt_session: string | null; max_revision: number | null;
  }>(
    q,
    `SELECT h.store_id, h.agent_id, h.session_id, h.checkpoint_id, h.revision,
            c.revision AS ckpt_revision, c.agent_id AS ckpt_agent, c.session_id AS ckpt_session,
            (SELECT MAX(revision) FROM checkpoints m
              WHERE m.store_id = h.store_id AND m.agent_id = h.agent_id AND m.session_id = h.session_id) AS max_revision
     FROM checkpoint_heads h LEFT JOIN checkpoints c ON c.id = h.checkpoint_id AND c.store_id = h.store_id`,
  )) {
    const who = `latest checkpoint of agent ${h.agent_id} session ${h.session_id} in ${h.store_id}`;
    if (h.ckpt_revision === null) report(`${who}: names ${h.checkpoint_id}, which does not exist`);
    else if (h.ckpt_agent !== h.agent_id || h.ckpt_session !== h.session_id) report(`${who}: names ${h.checkpoint_id} of another session`);
    else if (h.ckpt_revision !== h.revision || h.max_revision !== h.revision) {
      report(`${who}: names revision ${h.revision}, but the newest checkpoint is revision ${h.max_revision}`);
    }
  }
  for await (const b of pages<{ seq: number; id: string; bundle: string }>(q, 'SELECT seq, id, bundle FROM checkpoints WHERE seq > $1 ORDER BY seq LIMIT $2')) {
    try {
      JSON.parse(b.bundle);
    } catch {
      report(`checkpoint ${b.id}: stored bundle is not JSON`);
    }
  }
}

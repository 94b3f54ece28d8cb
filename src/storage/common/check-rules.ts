/**
 * @module What `mnemo check` says of the rows it reads, for both adapters: each adapter runs its own
 * queries (sqlite/check.ts, postgres/check.ts) and hands every row to these rules, so a broken
 * database reads the same on either engine. Flags are SQLite's 0/1 or NULL, or PostgreSQL's
 * booleans: the rules test them for truth.
 */
import { byteLength, MAX_CONTENT_BYTES, sha256Hex } from '../../domain/content.js';
import { ancestors } from '../../domain/paths.js';
import { assertMemoryPath } from '../../validate/memory.js';
import { RECEIPT_VERSION_FIELDS, type MemoryRow, type VersionRow } from './rows.js';

/** More than this many problems are summarised, so a badly broken file still gives a readable report. */
export const MAX_REPORTED = 200;

export type Report = (line: string) => void;

/** The problems found, and the `report` that adds one (past MAX_REPORTED, one line says more were cut). */
export function problemList(): { problems: string[]; report: Report } {
  const problems: string[] = [];
  const report = (line: string) => {
    if (problems.length < MAX_REPORTED) problems.push(line);
    else if (problems.length === MAX_REPORTED) problems.push('… more problems not shown');
  };
  return { problems, report };
}

/** Invariant 19 (content stored once): a version whose text has no `contents` row. */
export function reportMissingContent(r: { id: string; store_id: string }, report: Report): void {
  report(`version ${r.id} in ${r.store_id}: its content is not stored (no contents row for its content_sha256)`);
}

/** Invariant 19: a memory whose text has no `contents` row (its row names the text by sha only). */
export function reportMissingMemoryContent(m: { id: string; path: string; store_id: string }, report: Report): void {
  report(`memory ${m.id} (${m.path}) in ${m.store_id}: its content is not stored (no contents row for its content_sha256)`);
}

/**
 * Invariant 20 (sqlite/schema/content-times.ts): a version without its content time or its memory's
 * creation, which an `as_of` mount would date 1970.
 */
export function reportMissingContentTimes(r: { id: string; store_id: string }, report: Report): void {
  report(`version ${r.id} in ${r.store_id}: has no content_at or memory_created_at (a point-in-time mount would date it 1970)`);
}

/** The versions the invariant 20 check reads, at most one past what is reported (both engines' SQL). */
export const MISSING_CONTENT_TIMES_SQL = `SELECT id, store_id FROM versions WHERE content_at IS NULL OR memory_created_at IS NULL LIMIT ${MAX_REPORTED + 1}`;

/** Invariant 19: a stored text no version holds (its release trigger did not run). */
export function reportUnheldContent(sha256: string, report: Report): void {
  report(`content ${sha256}: stored, but no version holds it`);
}

/** Invariant 19: a stored text whose SHA-256 is not its key. */
export function reportMisHashedContent(sha256: string, report: Report): void {
  report(`content ${sha256}: its text does not hash to its key`);
}

function validPath(path: string): boolean {
  try {
    assertMemoryPath(path);
    return true;
  } catch {
    return false;
  }
}

/** The columns of a memory's head version the check compares with the memory. */
export type HeadVersionRow = Pick<VersionRow, 'id' | 'memory_id' | 'store_id' | 'operation' | 'redacted_at' | 'path' | 'content' | 'content_sha256' | 'content_size_bytes'>;

/**
 * Returns `check(memory, head)`, to be called with every memory ordered by store, then path (so
 * every ancestor of a path has been seen before it: the overlap rule needs that order), and its
 * head version, or null where none exists.
 */
export function memoryCheck(report: Report): (m: MemoryRow & { content: string | null }, v: HeadVersionRow | null) => void {
  let store = '';
  let live = new Set<string>();
  return (m, v) => {
    if (m.store_id !== store) {
      store = m.store_id;
      live = new Set();
    }
    const what = `memory ${m.id} (${m.path}) in ${m.store_id}`;
    if (!validPath(m.path)) report(`${what}: path is not a valid memory path`);
    for (const a of ancestors(m.path)) if (live.has(a)) report(`${what}: path overlaps the live memory at ${a}`);
    live.add(m.path);
    // The row names its text by sha; with no `contents` row there is no text to measure.
    if (m.content === null) return reportMissingMemoryContent(m, report);
    if (/\p{Cs}/u.test(m.content)) report(`${what}: content is not well-formed Unicode`);
    const size = byteLength(m.content);
    if (size > MAX_CONTENT_BYTES) report(`${what}: content is ${size} bytes, over the ${MAX_CONTENT_BYTES}-byte limit`);
    if (sha256Hex(m.content) !== m.content_sha256) report(`${what}: content_sha256 does not match its content`);
    if (size !== m.content_size_bytes) report(`${what}: content_size_bytes ${m.content_size_bytes} does not match ${size}`);
    if (!v) report(`${what}: head version ${m.version_id} does not exist`);
    else if (v.memory_id !== m.id || v.store_id !== m.store_id) report(`${what}: head version ${v.id} belongs to memory ${v.memory_id}`);
    else if (v.operation === 'deleted') report(`${what}: head version ${v.id} is a deletion`);
    else if (v.redacted_at !== null) report(`${what}: head version ${v.id} is redacted`);
    else if (v.path !== m.path || v.content !== m.content || v.content_sha256 !== m.content_sha256 || v.content_size_bytes !== m.content_size_bytes) {
      report(`${what}: head version ${v.id} does not hold the memory's path and content`);
    }
  };
}

export function checkVersionPath(r: { id: string; path: string }, report: Report): void {
  if (!validPath(r.path)) report(`version ${r.id}: stored path ${JSON.stringify(r.path)} is not a valid memory path`);
}

/** A receipt, and whether its store and version exist and that version is redacted. */
export interface ReceiptCheckRow {
  workspace_id: string;
  route: string;
  idem_key: string;
  body: string;
  store_id: string | null;
  version_id: string | null;
  store_exists: number | boolean | null;
  version_exists: number | boolean | null;
  version_redacted: number | boolean | null;
}

export function checkReceipt(r: ReceiptCheckRow, report: Report): void {
  const what = `receipt ${r.route} key ${JSON.stringify(r.idem_key)} in ${r.workspace_id}`;
  let body: unknown;
  try {
    body = JSON.parse(r.body);
  } catch {
    report(`${what}: stored body is not JSON`);
  }
  // Redaction rewrites these fields in the same transaction; any left is redacted text kept.
  if (r.version_redacted && body !== null && typeof body === 'object') {
    const kept = RECEIPT_VERSION_FIELDS.filter((f) => (body as Record<string, unknown>)[f] != null);
    if (kept.length > 0) report(`${what}: still holds ${kept.join(', ')} of redacted version ${r.version_id}`);
  }
  // A deleted store's versions and receipts go in its purge (invariant 6): until then neither is checked against the other.
  if (r.version_id !== null && r.store_exists && !r.version_exists) report(`${what}: points at version ${r.version_id}, which does not exist`);
}

/** A latest-checkpoint pointer, with the checkpoint it names (nulls: none) and its session's newest revision. */
export interface HeadCheckRow {
  store_id: string;
  agent_id: string;
  session_id: string;
  checkpoint_id: string;
  revision: number;
  ckpt_revision: number | null;
  ckpt_agent: string | null;
  ckpt_session: string | null;
  max_revision: number | null;
}

export function checkCheckpointHead(h: HeadCheckRow, report: Report): void {
  const who = `latest checkpoint of agent ${h.agent_id} session ${h.session_id} in ${h.store_id}`;
  if (h.ckpt_revision === null) report(`${who}: names ${h.checkpoint_id}, which does not exist`);
  else if (h.ckpt_agent !== h.agent_id || h.ckpt_session !== h.session_id) report(`${who}: names ${h.checkpoint_id} of another session`);
  else if (h.ckpt_revision !== h.revision || h.max_revision !== h.revision) {
    report(`${who}: names revision ${h.revision}, but the newest checkpoint is revision ${h.max_revision}`);
  }
}

export function checkBundle(b: { id: string; bundle: string }, report: Report): void {
  try {
    JSON.parse(b.bundle);
  } catch {
    report(`checkpoint ${b.id}: stored bundle is not JSON`);
  }
}

/** A store whose usage counter and its memories and checkpoints disagree (the adapters' queries return only those). */
export interface UsageMismatchRow {
  store_id: string;
  kept_memories: number;
  kept_bytes: number;
  kept_checkpoint_bytes: number;
  memories: number;
  bytes: number;
  checkpoint_bytes: number;
}

export function reportUsageMismatch(r: UsageMismatchRow, report: Report): void {
  report(
    `store ${r.store_id}: usage counter says ${r.kept_memories} memories / ${r.kept_bytes} bytes, the store holds ${r.memories} / ${r.bytes} (memories and checkpoints)` +
      (r.kept_checkpoint_bytes !== r.checkpoint_bytes ? `; it says ${r.kept_checkpoint_bytes} bytes of checkpoints, the store holds ${r.checkpoint_bytes}` : '') +
      ' (rebuild with: DELETE FROM store_usage; INSERT INTO store_usage (store_id, memories, bytes, checkpoint_bytes) SELECT store_id, sum(n), sum(b), sum(cb) FROM' +
      ' (SELECT store_id, 1 AS n, content_size_bytes AS b, 0 AS cb FROM memories UNION ALL SELECT store_id, 0, size_bytes, size_bytes FROM checkpoints) x GROUP BY store_id;)',
  );
}

/**
 * @module The domain's invariants checked against the database (`mnemo check`): every memory's head
 * version, stored bytes and paths, overlap-free live paths, and receipts that point at real versions
 * and hold no text of a redacted one, and each version's own number at its path (`.history`).
 */
import { byteLength, MAX_CONTENT_BYTES, sha256Hex } from '../../domain/content.js';
import { ancestors } from '../../domain/paths.js';
import { assertMemoryPath } from '../../validate/memory.js';
import { createContinuityCheck } from './check-continuity.js';
import { createUsageCheck } from './check-limits.js';
import type { MemoryRow, VersionRow } from './rows.js';
import type { SyncReads } from './reads.js';
import { RECEIPT_VERSION_FIELDS } from './receipts.js';
import { versionContent } from './contents.js';
import type { Db } from './tx.js';

/** More than this many problems are summarised, so a badly broken file still gives a readable report. */
const MAX_REPORTED = 200;

export function createCheckStatements(db: Db): Pick<SyncReads, 'domainCheck' | 'integrityCheck'> {
  const q = {
    memories: db.prepare('SELECT * FROM memories ORDER BY store_id, path'),
    version: db.prepare(`SELECT *, ${versionContent('versions')} AS content FROM versions WHERE id = ?`),
    versionPaths: db.prepare('SELECT id, path FROM versions WHERE path IS NOT NULL'),
    // Invariant 18 (sqlite/schema/history.ts): each version at a path has its own number there.
    pathNumbers: db.prepare(
      `SELECT store_id, path, path_seq, count(*) AS n FROM versions WHERE path IS NOT NULL
       GROUP BY store_id, path, path_seq HAVING path_seq IS NULL OR count(*) > 1`,
    ),
    // Invariant 19 (sqlite/schema/contents.ts): every version's text is stored, and only held text is.
    missingContents: db.prepare(
      `SELECT v.id, v.store_id FROM versions v WHERE v.content_sha256 IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.sha256 = v.content_sha256) LIMIT ${MAX_REPORTED + 1}`,
    ),
    unheldContents: db.prepare(
      `SELECT c.sha256 FROM contents c WHERE NOT EXISTS (SELECT 1 FROM versions v WHERE v.content_sha256 = c.sha256) LIMIT ${MAX_REPORTED + 1}`,
    ).pluck(),
    contents: db.prepare('SELECT sha256, content FROM contents'),
    orphanMemories: db.prepare('SELECT id, store_id FROM memories WHERE store_id NOT IN (SELECT id FROM stores)'),
    receipts: db.prepare(
      `SELECT r.workspace_id, r.route, r.idem_key, r.body, r.store_id, r.version_id,
              (SELECT 1 FROM stores s WHERE s.id = r.store_id) AS store_exists,
              (SELECT 1 FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id) AS version_exists,
              (SELECT v.redacted_at IS NOT NULL FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id) AS version_redacted
       FROM idempotency_receipts r`,
    ),
  };
  const checkContinuity = createContinuityCheck(db);
  const checkUsage = createUsageCheck(db);

  return {
    integrityCheck(): string[] {
      const rows = db.pragma('integrity_check') as { integrity_check: string }[];
      const fk = db.pragma('foreign_key_check') as unknown[];
      const problems = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
      if (fk.length > 0) problems.push(`${fk.length} foreign key violation(s)`);
      return problems;
    },
    domainCheck(): string[] {
      const problems: string[] = [];
      const report = (line: string) => {
        if (problems.length < MAX_REPORTED) problems.push(line);
        else if (problems.length === MAX_REPORTED) problems.push('… more problems not shown');
      };
      checkMemories(q, report);
      checkContinuity(report);
      checkUsage(report);
      for (const r of q.versionPaths.iterate() as Iterable<{ id: string; path: string }>) {
        if (!validPath(r.path)) report(`version ${r.id}: stored path ${JSON.stringify(r.path)} is not a valid memory path`);
      }
      for (const r of q.pathNumbers.iterate() as Iterable<{ store_id: string; path: string; path_seq: number | null; n: number }>) {
        report(r.path_seq === null
          ? `store ${r.store_id}: ${r.n} version(s) at ${JSON.stringify(r.path)} have no number at their path (.history)`
          : `store ${r.store_id}: ${r.n} versions at ${JSON.stringify(r.path)} share number ${r.path_seq} (.history)`);
      }
      for (const r of q.missingContents.all() as { id: string; store_id: string }[]) {
        report(`version ${r.id} in ${r.store_id}: its content is not stored (no contents row for its content_sha256)`);
      }
      for (const sha of q.unheldContents.all() as string[]) report(`content ${sha}: stored, but no version holds it`);
      for (const c of q.contents.iterate() as Iterable<{ sha256: string; content: string }>) {
        if (sha256Hex(c.content) !== c.sha256) report(`content ${c.sha256}: its text does not hash to its key`);
      }
      for (const r of q.orphanMemories.all() as { id: string; store_id: string }[]) {
        report(`memory ${r.id}: its store ${r.store_id} does not exist`);
      }
      for (const r of q.receipts.iterate() as Iterable<ReceiptCheckRow>) {
        const what = `receipt ${r.route} key ${JSON.stringify(r.idem_key)} in ${r.workspace_id}`;
        let body: unknown;
        try {
          body = JSON.parse(r.body);
        } catch {
          report(`${what}: stored body is not JSON`);
        }
        // Redaction rewrites these fields in the same transaction; any left is redacted text kept.
        if (r.version_redacted === 1 && body !== null && typeof body === 'object') {
          const kept = RECEIPT_VERSION_FIELDS.filter((f) => (body as Record<string, unknown>)[f] != null);
          if (kept.length > 0) report(`${what}: still holds ${kept.join(', ')} of redacted version ${r.version_id}`);
        }
        // Deleting a store deletes its versions (invariant 6); a receipt may outlive them.
        if (r.version_id !== null && r.store_exists === 1 && r.version_exists !== 1) {
          report(`${what}: points at version ${r.version_id}, which does not exist`);
        }
      }
      return problems;
    },
  };
}

interface ReceiptCheckRow {
  workspace_id: string;
  route: string;
  idem_key: string;
  body: string;
  store_id: string | null;
  version_id: string | null;
  store_exists: number | null;
  version_exists: number | null;
  version_redacted: number | null;
}

function validPath(path: string): boolean {
  try {
    assertMemoryPath(path);
    return true;
  } catch {
    return false;
  }
}

function checkMemories(q: { memories: { iterate(): Iterable<unknown> }; version: { get(id: string): unknown } }, report: (l: string) => void): void {
  let store = '';
  let live = new Set<string>();
  for (const m of q.memories.iterate() as Iterable<MemoryRow & { content: string }>) {
    if (m.store_id !== store) {
      store = m.store_id;
      live = new Set();
    }
    const what = `memory ${m.id} (${m.path}) in ${m.store_id}`;
    if (!validPath(m.path)) report(`${what}: path is not a valid memory path`);
    // Rows come in path order, so every ancestor of a path has been seen before it.
    for (const a of ancestors(m.path)) if (live.has(a)) report(`${what}: path overlaps the live memory at ${a}`);
    live.add(m.path);
    if (/\p{Cs}/u.test(m.content)) report(`${what}: content is not well-formed Unicode`);
    const size = byteLength(m.content);
    if (size > MAX_CONTENT_BYTES) report(`${what}: content is ${size} bytes, over the ${MAX_CONTENT_BYTES}-byte limit`);
    if (sha256Hex(m.content) !== m.content_sha256) report(`${what}: content_sha256 does not match its content`);
    if (size !== m.content_size_bytes) report(`${what}: content_size_bytes ${m.content_size_bytes} does not match ${size}`);
    const v = q.version.get(m.version_id) as VersionRow | undefined;
    if (!v) {
      report(`${what}: head version ${m.version_id} does not exist`);
      continue;
    }
    if (v.memory_id !== m.id || v.store_id !== m.store_id) report(`${what}: head version ${v.id} belongs to memory ${v.memory_id}`);
    else if (v.operation === 'deleted') report(`${what}: head version ${v.id} is a deletion`);
    else if (v.redacted_at !== null) report(`${what}: head version ${v.id} is redacted`);
    else if (v.path !== m.path || v.content !== m.content || v.content_sha256 !== m.content_sha256 || v.content_size_bytes !== m.content_size_bytes) {
      report(`${what}: head version ${v.id} does not hold the memory's path and content`);
    }
  }
}

/**
 * @module The domain's invariants checked against the database (`mnemo check`): every memory's head
 * version, stored bytes and paths, overlap-free live paths, and receipts that point at real versions
 * and hold no text of a redacted one, and each version's own number at its path (`.history`). The
 * SQL is this adapter's; what a row's problems are is said once for both engines (common/check-rules.ts).
 */
import { sha256Hex } from '../../domain/content.js';
import {
  checkReceipt, checkVersionPath, MAX_REPORTED, MISSING_CONTENT_TIMES_SQL, memoryCheck, problemList, reportMisHashedContent, reportMissingContent,
  reportMissingContentTimes, reportUnheldContent,
  type HeadVersionRow, type ReceiptCheckRow, type Report,
} from '../common/check-rules.js';
import type { MemoryRow } from '../common/rows.js';
import { createContinuityCheck } from './check-continuity.js';
import { createUsageCheck } from './check-limits.js';
import type { SyncReads } from './reads.js';
import { textOf, versionContent } from './contents.js';
import type { Db } from './tx.js';

export function createCheckStatements(db: Db): Pick<SyncReads, 'domainCheck' | 'integrityCheck'> {
  const q = {
    memories: db.prepare(`SELECT *, ${textOf('memories')} AS content FROM memories ORDER BY store_id, path`),
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
    // Invariant 20 (sqlite/schema/content-times.ts): every version carries its two times.
    missingContentTimes: db.prepare(MISSING_CONTENT_TIMES_SQL),
    orphanMemories: db.prepare('SELECT id, store_id FROM memories WHERE store_id NOT IN (SELECT id FROM stores)'),
    receipts: db.prepare(
      `SELECT r.workspace_id, r.route, r.idem_key, r.body, r.store_id, r.version_id,
              (SELECT 1 FROM stores s WHERE s.id = r.store_id AND s.deleted_at IS NULL) AS store_exists,
              (SELECT 1 FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id) AS version_exists,
              (SELECT v.redacted_at IS NOT NULL FROM versions v WHERE v.id = r.version_id AND v.store_id = r.store_id) AS version_redacted
       FROM idempotency_receipts r`,
    ),
  };
  const checkContinuity = createContinuityCheck(db);
  const checkUsage = createUsageCheck(db);

  return {
    integrityCheck(): string[] {
      let rows: { integrity_check: string }[];
      let fk: unknown[];
      try {
        rows = db.pragma('integrity_check') as { integrity_check: string }[];
        fk = db.pragma('foreign_key_check') as unknown[];
      } catch (err) {
        if (isDamage(err)) return [damaged(db.name, err)];
        throw err;
      }
      // One finding a line: a row may hold several ("*** in database main ***\nTree 18 page 18 cell 3: …").
      const findings = rows
        .flatMap((r) => r.integrity_check.split('\n'))
        .map((m) => m.trim())
        .filter((m) => m !== 'ok' && m !== '' && !/^\*\*\* in database \w+ \*\*\*$/.test(m));
      const problems = findings.length > MAX_ENGINE_LINES
        ? [...findings.slice(0, MAX_ENGINE_LINES), `… ${findings.length - MAX_ENGINE_LINES} more findings of integrity_check not shown`]
        : findings;
      if (fk.length > 0) problems.push(`${fk.length} foreign key violation(s)`);
      // Named for the engine, beside the domain's own findings in `mnemo check`.
      return problems.map((p) => `sqlite: ${p}`);
    },
    domainCheck(): string[] {
      const { problems, report } = problemList();
      try {
        domainChecks(report);
      } catch (err) {
        if (!isDamage(err)) throw err;
        report(damaged(db.name, err));
      }
      return problems;
    },
  };

  function domainChecks(report: Report): void {
    checkMemories(q, report);
    checkContinuity(report);
    checkUsage(report);
    for (const r of q.versionPaths.iterate() as Iterable<{ id: string; path: string }>) checkVersionPath(r, report);
    for (const r of q.pathNumbers.iterate() as Iterable<{ store_id: string; path: string; path_seq: number | null; n: number }>) {
      report(r.path_seq === null
        ? `store ${r.store_id}: ${r.n} version(s) at ${JSON.stringify(r.path)} have no number at their path (.history)`
        : `store ${r.store_id}: ${r.n} versions at ${JSON.stringify(r.path)} share number ${r.path_seq} (.history)`);
    }
    for (const r of q.missingContents.all() as { id: string; store_id: string }[]) reportMissingContent(r, report);
    for (const sha of q.unheldContents.all() as string[]) reportUnheldContent(sha, report);
    for (const r of q.missingContentTimes.all() as { id: string; store_id: string }[]) reportMissingContentTimes(r, report);
    for (const c of q.contents.iterate() as Iterable<{ sha256: string; content: string }>) {
      if (sha256Hex(c.content) !== c.sha256) reportMisHashedContent(c.sha256, report);
    }
    for (const r of q.orphanMemories.all() as { id: string; store_id: string }[]) {
      report(`memory ${r.id}: its store ${r.store_id} does not exist`);
    }
    for (const r of q.receipts.iterate() as Iterable<ReceiptCheckRow>) checkReceipt(r, report);
  }
}

/** integrity_check's own findings shown at most (one damaged index page alone gave ~100 lines). */
const MAX_ENGINE_LINES = 50;

/** SQLite's "database disk image is malformed" and "file is not a database". */
export function isDamage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/** The one problem line for a file SQLite cannot read as a whole database. */
export function damaged(file: string, err: unknown): string {
  return `sqlite: the database file ${file} is damaged (${(err as Error).message}); restore it from a backup (mnemo restore)`;
}

function checkMemories(q: { memories: { iterate(): Iterable<unknown> }; version: { get(id: string): unknown } }, report: Report): void {
  const check = memoryCheck(report);
  for (const m of q.memories.iterate() as Iterable<MemoryRow & { content: string | null }>) {
    check(m, (q.version.get(m.version_id) as HeadVersionRow | undefined) ?? null);
  }
}

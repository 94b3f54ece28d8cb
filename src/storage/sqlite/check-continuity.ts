/**
 * @module `mnemo check` for the continuity tables (schema invariants 11 and 12): every memory is
 * indexed or queued for it, and every latest pointer names the newest live checkpoint.
 */
import { checkBundle, checkCheckpointHead, type HeadCheckRow } from '../common/check-rules.js';
import type { Db } from './tx.js';

/** Starts the index afresh; the next search or upkeep re-indexes every memory. */
const REINDEX_HINT =
  "re-index every memory with BEGIN; INSERT INTO memories_fts (memories_fts) VALUES ('delete-all'); DELETE FROM search_backlog; INSERT INTO search_backlog (seq) SELECT seq FROM memories; COMMIT;";

export function createContinuityCheck(db: Db): (report: (line: string) => void) => void {
  const q = {
    // FTS5's own structural check. The index is contentless, so it has no text to compare against.
    fts: db.prepare(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 0)`),
    // A contentless table records each indexed rowid in its docsize shadow table.
    unindexed: db.prepare(
      `SELECT m.id, m.path, m.store_id FROM memories m
       WHERE m.seq NOT IN (SELECT id FROM memories_fts_docsize) AND m.seq NOT IN (SELECT seq FROM search_backlog)`,
    ),
    strays: db.prepare(
      `SELECT d.id FROM memories_fts_docsize d
       WHERE d.id NOT IN (SELECT seq FROM memories) AND d.id NOT IN (SELECT seq FROM search_backlog)`,
    ).pluck(),
    // An indexed memory queued for re-indexing whose indexed text is gone: its old words cannot be removed.
    stuck: db.prepare(
      `SELECT b.seq, b.indexed_version FROM search_backlog b JOIN memories_fts_docsize d ON d.id = b.seq
       LEFT JOIN versions v ON v.id = b.indexed_version
       WHERE v.content_sha256 IS NULL OR NOT EXISTS (SELECT 1 FROM contents c WHERE c.sha256 = v.content_sha256)`,
    ),
    heads: db.prepare(
      `SELECT h.store_id, h.agent_id, h.session_id, h.checkpoint_id, h.revision,
              c.revision AS ckpt_revision, c.agent_id AS ckpt_agent, c.session_id AS ckpt_session,
              (SELECT MAX(revision) FROM checkpoints m
                WHERE m.store_id = h.store_id AND m.agent_id = h.agent_id AND m.session_id = h.session_id) AS max_revision
       FROM checkpoint_heads h LEFT JOIN checkpoints c ON c.id = h.checkpoint_id AND c.store_id = h.store_id`,
    ),
    bundles: db.prepare('SELECT id, bundle FROM checkpoints'),
  };

  return function checkContinuity(report) {
    checkSearchIndex(q, report);
    for (const h of q.heads.iterate() as Iterable<HeadCheckRow>) checkCheckpointHead(h, report);
    for (const b of q.bundles.iterate() as Iterable<{ id: string; bundle: string }>) checkBundle(b, report);
  };
}

function checkSearchIndex(
  q: { fts: { run(): unknown } } & Record<'unindexed' | 'strays' | 'stuck', { iterate(): Iterable<unknown> }>,
  report: (line: string) => void,
): void {
  const lines: string[] = [];
  try {
    q.fts.run();
  } catch (err) {
    // FTS5's structural check is an INSERT: a read-only check cannot run it, which says nothing
    // about the index (the row-level checks below still run). Not a finding, and no re-index.
    if (!/^SQLITE_READONLY/.test(String((err as { code?: unknown }).code))) lines.push(`search index: ${(err as Error).message}`);
  }
  for (const m of q.unindexed.iterate() as Iterable<{ id: string; path: string; store_id: string }>) {
    lines.push(`memory ${m.id} (${m.path}) in ${m.store_id}: missing from the search index and not queued for it`);
  }
  for (const seq of q.strays.iterate() as Iterable<number>) {
    lines.push(`search index: entry ${seq} belongs to no memory and is not queued for removal`);
  }
  for (const r of q.stuck.iterate() as Iterable<{ seq: number; indexed_version: string | null }>) {
    lines.push(`search index: entry ${r.seq} is queued, but the text it was indexed with (version ${r.indexed_version ?? 'none'}) is gone`);
  }
  // The repair comes first: the report is cut after a few hundred lines.
  if (lines.length > 0) report(`search index: ${lines.length} problem(s); ${REINDEX_HINT}`);
  for (const line of lines) report(line);
}

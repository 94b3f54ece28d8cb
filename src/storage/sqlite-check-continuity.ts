/**
 * @module `mnemo check` for the continuity tables (schema invariants 11 and 12): the search index
 * matches the memories it indexes, and every latest pointer names the newest live checkpoint.
 */
import type { Db } from './tx.js';

export function createContinuityCheck(db: Db): (report: (line: string) => void) => void {
  const q = {
    // FTS5's own check; rank 1 also compares the index with the memories table (external content).
    fts: db.prepare(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)`),
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
    try {
      q.fts.run();
    } catch (err) {
      report(`search index: ${(err as Error).message}; rebuild it with INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')`);
    }
    for (const h of q.heads.iterate() as Iterable<HeadRow>) {
      const who = `latest checkpoint of agent ${h.agent_id} session ${h.session_id} in ${h.store_id}`;
      if (h.ckpt_revision === null) report(`${who}: names ${h.checkpoint_id}, which does not exist`);
      else if (h.ckpt_agent !== h.agent_id || h.ckpt_session !== h.session_id) report(`${who}: names ${h.checkpoint_id} of another session`);
      else if (h.ckpt_revision !== h.revision || h.max_revision !== h.revision) {
        report(`${who}: names revision ${h.revision}, but the newest checkpoint is revision ${h.max_revision}`);
      }
    }
    for (const b of q.bundles.iterate() as Iterable<{ id: string; bundle: string }>) {
      try {
        JSON.parse(b.bundle);
      } catch {
        report(`checkpoint ${b.id}: stored bundle is not JSON`);
      }
    }
  };
}

interface HeadRow {
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

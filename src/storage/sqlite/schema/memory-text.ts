/**
 * @module Migration 17 (issue 15): a memory row names its text by `content_sha256` only, like a
 * version row. Before it every live text was stored twice (the memory row and its `contents` row)
 * and a fork of N memories wrote N texts; now a fork writes none.
 *
 * A memory's text is always its head version's text, and a live head can never be redacted, so
 * the versions already hold every live memory's `contents` row alive (invariant 19 covers memory
 * rows too: `mnemo check` reports a memory whose sha has no `contents` row). Readers take the text
 * by the sha (sqlite/contents.ts `textOf`): the mount's reads, full views, search snippets, the
 * substring scan and the FTS indexer.
 *
 * The backlog trigger fired on `content` changes; it now fires on the sha, which changes exactly
 * when the text does. In one transaction, like every migration.
 */
export const MIGRATION_17 = `
-- A no-op on a healthy file (every memory's head version holds its text already); it keeps the
-- text of a row no version stored (a hand-made file) rather than lose it with the column.
INSERT OR IGNORE INTO contents (sha256, content) SELECT content_sha256, content FROM memories ORDER BY seq;
DROP TRIGGER search_backlog_update;
ALTER TABLE memories DROP COLUMN content;
CREATE TRIGGER search_backlog_update AFTER UPDATE OF path, content_sha256 ON memories BEGIN
  INSERT OR IGNORE INTO search_backlog (seq, indexed_version) VALUES (OLD.seq, OLD.version_id);
END;
`;

/**
 * @module Migration 5: full-text indexing leaves the write path. A write only queues the memory's
 * seq; sqlite/search-index.ts tokenizes queued memories later, in batches (tokenizing 4 KiB took
 * ~0.18 ms of every ~0.6 ms save inside its fsync'd transaction; batched, an insert costs a quarter).
 *
 * Invariant 11 (replacing migration 3's): every current row of `memories` is either indexed in
 * `memories_fts` under its seq with its current path and content, or queued in `search_backlog`
 * with `indexed_version` naming the version whose text the index holds for it (NULL: none). A
 * triggered write queues the seq in the same transaction as the change, and a search first indexes
 * everything queued, so no reader sees the lag (past a few batches it refuses instead, 503: see
 * sqlite/search.ts).
 *
 * `memories_fts` is contentless: it keeps no copy of the text, so removing a row takes the text it
 * was indexed with, read back from `indexed_version`. That is why it is not `contentless_delete=1`:
 * such a table refuses the 'delete' command and only tombstones a rowid, leaving its terms in the
 * file until a segment merge, while 'delete' with FTS5 secure-delete erases them at once. Versions
 * keep their text until redaction, which first empties the queue; only deleting a store removes
 * versions, and it first takes its memories out of the index.
 */
export const MIGRATION_5 = `
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_update;
DROP TRIGGER memories_fts_delete;
DROP TABLE memories_fts;

CREATE VIRTUAL TABLE memories_fts USING fts5(
  path, content, content = '', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);

CREATE TABLE search_backlog (
  seq              INTEGER PRIMARY KEY,
  indexed_version  TEXT
);

-- OR IGNORE keeps the first entry since the last indexing: its version is the one the index holds.
CREATE TRIGGER search_backlog_insert AFTER INSERT ON memories BEGIN
  INSERT OR IGNORE INTO search_backlog (seq, indexed_version) VALUES (NEW.seq, NULL);
END;
CREATE TRIGGER search_backlog_update AFTER UPDATE OF path, content ON memories BEGIN
  INSERT OR IGNORE INTO search_backlog (seq, indexed_version) VALUES (OLD.seq, OLD.version_id);
END;
CREATE TRIGGER search_backlog_delete AFTER DELETE ON memories BEGIN
  INSERT OR IGNORE INTO search_backlog (seq, indexed_version) VALUES (OLD.seq, OLD.version_id);
END;

-- An upgraded file searches the same from its first query.
INSERT INTO memories_fts (rowid, path, content) SELECT seq, path, content FROM memories;
`;

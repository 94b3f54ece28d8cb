/**
 * @module Migration 19: the full-text index takes a text out cheaply where no erasure is promised.
 *
 * With FTS5's secure-delete, taking a text out of the index rewrites an index page for each of its
 * distinct words: for prose (200–500 distinct words in 4 KiB) 2–5 ms a memory, so every edit of a
 * note cost its serving thread ten times its save (test/bench/README.md, stop 49). Without it, the
 * words stay in the older index pages, cancelled (never found), until a segment merge drops them.
 *
 * mnemo promises that text leaves the file at a redaction, and at a prune (a store's retention).
 * So (sqlite/search-index.ts):
 * - a memory of a store with a retention is re-indexed with secure-delete, as before: its prunes
 *   find nothing left to erase; every other memory without it, and its store is noted here;
 * - a redaction or a prune in a noted store marks it `erase_due` in its own transaction; the index
 *   is then merged into one segment, a bounded step per turn, before indexing resumes (no index
 *   writes between the steps, so the merge ends), which drops every cancelled word, and the rows
 *   here go in the step that finds nothing left to merge; a WAL truncation follows, as after a
 *   redaction. The caller waits for it (service), and a crash in between leaves `erase_due` for the
 *   search upkeep to finish.
 */
export const MIGRATION_19 = `
CREATE TABLE search_remnants (
  store_id   TEXT PRIMARY KEY,
  erase_due  INTEGER NOT NULL DEFAULT 0 CHECK (erase_due IN (0, 1))
);
`;

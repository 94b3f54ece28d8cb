/**
 * @module PostgreSQL migration 12: a text's trigrams are indexed off the write path (issue 14,
 * "Targets": mount saves). The substring search's trigram index on `contents.content` cost a save
 * about 0.28 ms of PostgreSQL's time for a 4 KiB text (a third of `mnemo_append`), on the cores the
 * server shares. A new text is now queued instead (`trigrams_ready` false, the partial index
 * `contents_trigram_queue` is the queue), and the search upkeep marks queued texts ready in
 * batches (postgres/search-index.ts), which is when the trigram index takes them: the index is
 * partial, on ready texts only. A substring search does not depend on it: it matches every text
 * of its store's memories, queued or not (postgres/search.ts).
 *
 * Texts already stored were indexed when written: they read as ready through the column's first
 * default (a constant default rewrites no row), and new rows take the second. The index is built
 * again as a partial one, which on a large database takes as long as building it did.
 *
 * `contents_immutable` lets exactly one change through: a queued text marked ready, nothing else.
 */
export const PG_MIGRATION_12 = String.raw`
ALTER TABLE contents ADD COLUMN trigrams_ready boolean NOT NULL DEFAULT true;
ALTER TABLE contents ALTER COLUMN trigrams_ready SET DEFAULT false;

CREATE OR REPLACE FUNCTION contents_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT OLD.trigrams_ready AND NEW.trigrams_ready AND NEW.sha256 = OLD.sha256 AND NEW.content = OLD.content THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'content rows never change: a new text is a new row' USING ERRCODE = 'restrict_violation';
END $$;

DROP INDEX contents_content_trgm;
CREATE INDEX contents_content_trgm ON contents USING gin (content gin_trgm_ops) WHERE trigrams_ready;
CREATE INDEX contents_trigram_queue ON contents (sha256) WHERE NOT trigrams_ready;
`;

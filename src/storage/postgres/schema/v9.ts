/**
 * @module PostgreSQL migration 9, as SQLite's 17 (sqlite/schema/memory-text.ts): a memory row names
 * its text by `content_sha256` only, and readers take it from `contents`. A live memory's text is
 * its head version's, which cannot be redacted, so the versions hold it alive (postgres/schema/v5.ts).
 *
 * What differs from SQLite: full-text search has no backlog here, so the memory row keeps its
 * tsvector, now a regular column the write statement fills from the text it is given
 * (`mnemo_search(path, content)`: the same words and weights as migration 1's generated column).
 * An index of words is not the content bytes: a redacted text never stays in it, since a live head
 * cannot be redacted and a memory row's tsvector is replaced with its text. A fork computes each
 * copied row's tsvector from the shared text, reading it and writing none. The substring search's
 * trigram index moves to `contents.content` (one per text in the database, not one per memory):
 * the query joins a store's memories to their texts by sha.
 *
 * Kept in a no-op step: a row whose text no version stored (a hand-made database) keeps it.
 */
export const PG_MIGRATION_9 = String.raw`
CREATE FUNCTION mnemo_search(path text, content text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN setweight(to_tsvector('simple'::regconfig, mnemo_words(path)), 'A') ||
         setweight(to_tsvector('simple'::regconfig, mnemo_words(content)), 'B');

INSERT INTO contents (sha256, content) SELECT DISTINCT ON (content_sha256) content_sha256, content FROM memories
  ON CONFLICT (sha256) DO NOTHING;
ALTER TABLE memories ALTER COLUMN search DROP EXPRESSION;
DROP INDEX memories_content_trgm;
ALTER TABLE memories DROP COLUMN content;
CREATE INDEX contents_content_trgm ON contents USING gin (content gin_trgm_ops);
`;

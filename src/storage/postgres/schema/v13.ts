/**
 * @module PostgreSQL migration 13: the words of a text, found in well under half the time. Filling a
 * memory's tsvector (the search upkeep, postgres/search-index.ts, and a search over rows still
 * queued) cost about 0.65 ms of PostgreSQL's time for a 4 KiB text, and nearly half of it was
 * `mnemo_words`' `regexp_replace`: its class with `\s` in it, and runs (`+`), are slow in
 * PostgreSQL's regex engine (0.3 ms for 4 KiB, against 0.07 ms for the class below, one character
 * at a time). On a 2-core host the upkeep runs beside a burst of mount saves on the same cores.
 *
 * The words are the same: the text search parser treats every whitespace character as a
 * separator, as it does a space, and a run of separators as one, so only ASCII punctuation has to
 * become spaces. The tsvector and the tsquery of the old and the new function were equal for every
 * one of 2,000 stored 4 KiB texts and of 200,000 random strings of letters, digits, punctuation,
 * ASCII and Unicode whitespace, combining marks and emoji; so the rows indexed before keep their
 * vectors, and no index is rebuilt.
 */
export const PG_MIGRATION_13 = String.raw`
CREATE OR REPLACE FUNCTION mnemo_words(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN lower(regexp_replace(unaccent('unaccent'::regdictionary, t), '[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]', ' ', 'g'));
`;

/**
 * @module Search snippets built from a memory's content: about SNIPPET_CHARS characters around the
 * first match, the match wrapped in **. The full-text index is contentless, so FTS5's snippet()
 * has no text to quote; these read the row the hit already joined.
 */

const SNIPPET_CHARS = 160;
/** What unicode61 keeps in a token (letters, digits, private use), plus the marks it strips. */
const TOKEN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

/** Substring mode: the first case-insensitive occurrence of the whole phrase. */
export function phraseExcerpt(content: string, phrase: string): string {
  const at = content.toLowerCase().indexOf(phrase.toLowerCase());
  return at < 0 ? lead(content) : around(content, at, phrase.length);
}

/**
 * Full-text mode: the first word of `content` that is one of the query's words, compared as the
 * index compares them (case and diacritics folded), so "ecole" marks "École".
 */
export function wordExcerpt(content: string, query: string): string {
  const terms = new Set(Array.from(query.matchAll(TOKEN), (m) => fold(m[0])));
  for (const m of content.matchAll(TOKEN)) {
    if (terms.has(fold(m[0]))) return around(content, m.index, m[0].length);
  }
  return lead(content); // matched on the path
}

function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

function lead(content: string): string {
  return content.length > SNIPPET_CHARS ? `${content.slice(0, SNIPPET_CHARS)}…` : content;
}

function around(content: string, at: number, length: number): string {
  const from = Math.max(0, at - Math.floor((SNIPPET_CHARS - length) / 2));
  const to = Math.max(Math.min(content.length, from + SNIPPET_CHARS), at + length);
  return (
    (from > 0 ? '…' : '') + content.slice(from, at) + `**${content.slice(at, at + length)}**` + content.slice(at + length, to) +
    (to < content.length ? '…' : '')
  );
}

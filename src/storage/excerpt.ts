/**
 * @module Search snippets built from a memory's content: about SNIPPET_CHARS characters around the
 * first match, the match wrapped in **. The full-text index is contentless, so FTS5's snippet()
 * has no text to quote; these read the row the hit already joined. Every cut falls between code
 * points, so a snippet never holds half a surrogate pair.
 */
import type { SearchHit } from '../domain/types.js';

/** A snippet and where its marked text is, as a hit carries them. */
export type Excerpt = Pick<SearchHit, 'snippet' | 'match'>;

const SNIPPET_CHARS = 160;
/** What unicode61 keeps in a token (letters, digits, private use), plus the marks it strips. */
const TOKEN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

/**
 * Substring mode: the first case-insensitive occurrence of the whole phrase. It is found in the
 * lowercased content, which can be longer ("İ" lowercases to two code units), so its place there
 * is mapped back to the content's own.
 */
export function phraseExcerpt(content: string, phrase: string): Excerpt {
  const needle = phrase.toLowerCase();
  const at = content.toLowerCase().indexOf(needle);
  if (at < 0) return lead(content);
  const { start, end } = originalSpan(content, at, at + needle.length);
  return around(content, start, end - start);
}

/**
 * Full-text mode: the first word of `content` that is one of the query's words, compared as the
 * index compares them (case and diacritics folded), so "ecole" marks "École".
 */
export function wordExcerpt(content: string, query: string): Excerpt {
  const terms = new Set(Array.from(query.matchAll(TOKEN), (m) => fold(m[0])));
  for (const m of content.matchAll(TOKEN)) {
    if (terms.has(fold(m[0]))) return around(content, m.index, m[0].length);
  }
  return lead(content); // matched on the path
}

function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * The code points of `content` whose lowercase covers `[from, to)` of `content.toLowerCase()`.
 * Lowercasing code point by code point gives the whole string's lengths: the one rule that looks
 * at context (final sigma) maps one unit to one.
 */
function originalSpan(content: string, from: number, to: number): { start: number; end: number } {
  let start = 0;
  let lowered = 0;
  let i = 0;
  for (const ch of content) {
    const next = lowered + ch.toLowerCase().length;
    if (next <= from) start = i + ch.length;
    lowered = next;
    i += ch.length;
    if (lowered >= to) break;
  }
  return { start, end: i };
}

function lead(content: string): Excerpt {
  if (content.length <= SNIPPET_CHARS) return { snippet: content, match: null };
  return { snippet: `${content.slice(0, boundary(content, SNIPPET_CHARS))}…`, match: null };
}

function around(content: string, at: number, length: number): Excerpt {
  const from = boundary(content, Math.max(0, at - Math.floor((SNIPPET_CHARS - length) / 2)));
  const to = boundary(content, Math.max(Math.min(content.length, from + SNIPPET_CHARS), at + length));
  const before = (from > 0 ? '…' : '') + content.slice(from, at) + '**';
  const snippet = before + content.slice(at, at + length) + '**' + content.slice(at + length, to) + (to < content.length ? '…' : '');
  return { snippet, match: { start: before.length, end: before.length + length } };
}

/** `i`, or one before it when it would split a surrogate pair. */
function boundary(content: string, i: number): number {
  const high = content.charCodeAt(i - 1);
  const low = content.charCodeAt(i);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? i - 1 : i;
}

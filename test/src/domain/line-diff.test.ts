/**
 * The bounded line diff (src/domain/line-diff.ts): within its bound, the same hunks as the `diff`
 * package's own createTwoFilesPatch; past it, a diff that still applies.
 */
import { applyPatch, createTwoFilesPatch, FILE_HEADERS_ONLY, formatPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffTextLines, toHunks } from '../../../src/index.js';

const text = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', '', ' x', '\r'), fc.boolean()), { maxLength: 14 }).map((ls) => ls.map(([l, nl]) => (nl ? `${l}\n` : l)).join(''));

const unified = (from: string, to: string, context: number, bound?: { maxEdits: number; budgetMs: number }) =>
  formatPatch({ oldFileName: '/a', newFileName: '/b', oldHeader: 'x', newHeader: 'y', hunks: toHunks(diffTextLines(from, to, bound).runs, context) }, FILE_HEADERS_ONLY);

describe('bounded line diffs', () => {
  it('within the bound, reads exactly as the diff package\'s createTwoFilesPatch', () => {
    fc.assert(
      fc.property(text, text, fc.constantFrom(0, 1, 3, 4), (from, to, context) => {
        expect(diffTextLines(from, to).minimal).toBe(true);
        expect(unified(from, to, context)).toBe(createTwoFilesPatch('/a', '/b', from, to, 'x', 'y', { headerOptions: FILE_HEADERS_ONLY, context }));
      }),
      { seed: 15, numRuns: 2000 },
    );
  });

  it('past the bound, replaces the differing middle whole, and the diff still applies', () => {
    fc.assert(
      fc.property(text, text, (from, to) => {
        const d = diffTextLines(from, to, { maxEdits: 0, budgetMs: 0 });
        expect(d.minimal).toBe(from === to || d.runs.every((r) => r.kind === 'same'));
        expect(applyPatch(from, unified(from, to, 4, { maxEdits: 0, budgetMs: 0 }))).toBe(to);
      }),
      { seed: 15, numRuns: 2000 },
    );
    const kept = diffTextLines('head\n1\n2\ntail\n', 'head\n3\n4\ntail\n', { maxEdits: 0, budgetMs: 0 });
    expect(kept).toEqual({
      minimal: false,
      runs: [
        { kind: 'same', lines: ['head\n'] },
        { kind: 'removed', lines: ['1\n', '2\n'] },
        { kind: 'added', lines: ['3\n', '4\n'] },
        { kind: 'same', lines: ['tail\n'] },
      ],
    });
  });
});

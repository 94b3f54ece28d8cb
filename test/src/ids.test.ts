/**
 * Identifiers: the API's prefixes and 24 base62 characters, unique, and ordered by creation time
 * (the first 8 characters), which keeps SQLite's id indexes appending instead of scattering.
 */
import { describe, expect, it } from 'vitest';
import { ID_PREFIXES, newId, randomToken } from '../../src/ids.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ids', () => {
  it('carry their kind’s prefix and 24 base62 characters', () => {
    for (const [kind, prefix] of Object.entries(ID_PREFIXES)) {
      expect(newId(kind as keyof typeof ID_PREFIXES)).toMatch(new RegExp(`^${prefix}[0-9A-Za-z]{24}$`));
    }
  });

  it('never repeat, even when made in the same millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('version'));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('made later sort after earlier ones', async () => {
    const earlier = Array.from({ length: 50 }, () => newId('memory'));
    await sleep(5);
    const later = Array.from({ length: 50 }, () => newId('memory'));
    for (const a of earlier) for (const b of later) expect(a < b).toBe(true);
  });

  it('keep the random part random: API key secrets are random tokens with no time in them', () => {
    const a = randomToken(40);
    const b = randomToken(40);
    expect(a).toMatch(/^[0-9A-Za-z]{40}$/);
    expect(a.slice(0, 8)).not.toBe(b.slice(0, 8));
  });
});

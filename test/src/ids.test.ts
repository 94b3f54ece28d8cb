/**
 * Identifiers: the API's prefixes and 24 base62 characters, unique, and ordered by creation time
 * (the first 8 characters), which keeps SQLite's id indexes appending instead of scattering.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ID_PREFIXES, newId, randomToken } from '../../src/service/ids.js';

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

  it('made later sort after earlier ones', () => {
    // Only Date is faked: the clock ids read moves when the test says, not by waiting.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const earlier = Array.from({ length: 50 }, () => newId('memory'));
    vi.setSystemTime(Date.now() + 5);
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

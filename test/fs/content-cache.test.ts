/** The mounts' shared cache of file bytes (fs/content-cache.ts): bounded, and a redacted text leaves it. */
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../fs/content-cache.js';

describe('the content cache', () => {
  it('keeps texts by sha up to its bound, least recently used out first', () => {
    const cache = new ContentCache(64);
    cache.put('a', Buffer.alloc(8, 'a'));
    cache.put('b', Buffer.alloc(8, 'b'));
    expect(cache.get('a')?.toString()).toBe('aaaaaaaa');
    for (let i = 0; i < 7; i++) cache.put(`x${i}`, Buffer.alloc(8, 'x'));
    // 'b' was the least recently used: it went first; 'a', read since, stays.
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
  });

  it('forgets a text whose last version was redacted, and counts its bytes out', () => {
    const cache = new ContentCache(64);
    cache.put('secret', Buffer.alloc(8, 's'));
    cache.put('kept', Buffer.alloc(8, 'k'));
    cache.forget('secret');
    cache.forget('never-kept');
    expect(cache.get('secret')).toBeUndefined();
    // Its 8 bytes are free again: seven more texts of 8 fit beside 'kept' without evicting it.
    for (let i = 0; i < 7; i++) cache.put(`x${i}`, Buffer.alloc(8, 'x'));
    expect(cache.get('kept')?.toString()).toBe('kkkkkkkk');
  });

  it('drops every text when redactions elsewhere may have gone unheard, and holds its full bound again', () => {
    const cache = new ContentCache(64);
    for (let i = 0; i < 8; i++) cache.put(`t${i}`, Buffer.alloc(8, 't'));
    cache.clear();
    expect(cache.get('t0')).toBeUndefined();
    // Its count starts from nothing: eight new texts of 8 all stay.
    for (let i = 0; i < 8; i++) cache.put(`n${i}`, Buffer.alloc(8, 'n'));
    for (let i = 0; i < 8; i++) expect(cache.get(`n${i}`)).toBeDefined();
  });
});

/**
 * The PostgreSQL adapter's cache of found API keys (storage/postgres/key-cache.ts), on an injected
 * clock: what it keeps, for how long, and what makes it look a key up again. Its use on a real
 * database, with a revoke heard from another server, is in postgres-listener.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../src/domain/types.js';
import { MAX_KEPT, createKeyCache } from '../../src/storage/postgres/key-cache.js';

const key = (id: string, revokedAt: string | null = null): ApiKey => ({
  id, workspaceId: 'wrkspc_1', name: id, role: 'admin', storeIds: null, allWorkspaces: false, createdAt: '2026-03-01T00:00:00.000Z', revokedAt,
});

/** A cache on a clock the test moves, and a loader that counts its lookups. */
function setup(found: Map<string, ApiKey | null>, hearing = () => true) {
  let ms = 0;
  const cache = createKeyCache({ hearing, now: () => ms, maxAgeMs: 1000 });
  let lookups = 0;
  const find = (hash: string) =>
    cache.find(hash, async () => {
      lookups += 1;
      return found.get(hash) ?? null;
    });
  return { cache, find, lookups: () => lookups, advance: (by: number) => (ms += by) };
}

describe('the key cache', () => {
  it('keeps a live key found by its hash for maxAgeMs, then looks it up again', async () => {
    const t = setup(new Map([['h1', key('k1')]]));
    expect(await t.find('h1')).toEqual(key('k1'));
    t.advance(999);
    expect(await t.find('h1')).toEqual(key('k1'));
    expect(t.lookups()).toBe(1);
    t.advance(1);
    await t.find('h1');
    expect(t.lookups()).toBe(2);
  });

  it('never keeps an unknown hash or a revoked key: each is looked up on every find', async () => {
    const t = setup(new Map([['h2', key('k2', '2026-03-02T00:00:00.000Z')]]));
    expect(await t.find('nobody')).toBeNull();
    expect(await t.find('nobody')).toBeNull();
    expect((await t.find('h2'))?.revokedAt).not.toBeNull();
    expect((await t.find('h2'))?.revokedAt).not.toBeNull();
    expect(t.lookups()).toBe(4);
    expect(t.cache.size()).toBe(0);
  });

  it('forgets a key by its id, and clear forgets every key', async () => {
    const t = setup(new Map([['h1', key('k1')], ['h3', key('k3')]]));
    await t.find('h1');
    await t.find('h3');
    t.cache.forget('k1');
    expect(t.cache.size()).toBe(1);
    await t.find('h1');
    await t.find('h3');
    expect(t.lookups()).toBe(3);
    t.cache.clear();
    expect(t.cache.size()).toBe(0);
  });

  it('a lookup that began before a forget returns what it read but does not keep it (it may predate the revoke)', async () => {
    const found = new Map([['h1', key('k1')]]);
    const cache = createKeyCache({ hearing: () => true, now: () => 0 });
    let release!: () => void;
    const pending = cache.find('h1', () => new Promise<ApiKey | null>((r) => (release = () => r(found.get('h1')!))));
    cache.forget('k1');
    release();
    expect(await pending).toEqual(key('k1'));
    expect(cache.size()).toBe(0);
  });

  it('holds at most MAX_KEPT keys: expired ones go first, then the oldest found', async () => {
    const found = new Map(Array.from({ length: MAX_KEPT + 2 }, (_, i) => [`h${i}`, key(`k${i}`)] as const));
    const t = setup(found);
    for (let i = 0; i < MAX_KEPT; i++) await t.find(`h${i}`);
    expect(t.cache.size()).toBe(MAX_KEPT);
    // Still fresh: the oldest found (h0) makes room.
    await t.find(`h${MAX_KEPT}`);
    expect(t.cache.size()).toBe(MAX_KEPT);
    const before = t.lookups();
    await t.find('h1');
    expect(t.lookups()).toBe(before);
    await t.find('h0');
    expect(t.lookups()).toBe(before + 1);
    // All expired: one insert drops them all.
    t.advance(1000);
    await t.find(`h${MAX_KEPT + 1}`);
    expect(t.cache.size()).toBe(1);
  });

  it('keeps nothing and serves nothing kept while revokes are not heard (the listener is down)', async () => {
    let hearing = true;
    const t = setup(new Map([['h1', key('k1')]]), () => hearing);
    await t.find('h1');
    hearing = false;
    await t.find('h1');
    await t.find('h1');
    expect(t.lookups()).toBe(3);
    expect(t.cache.size()).toBe(0);
    hearing = true;
    await t.find('h1');
    await t.find('h1');
    expect(t.lookups()).toBe(4);
  });

  it('its mark moves at every forget and clear, stands still between them, and moves every maxAgeMs while revokes are not heard', () => {
    let hearing = true;
    const t = setup(new Map(), () => hearing);
    const first = t.cache.mark();
    t.advance(5000);
    expect(t.cache.mark()).toBe(first);
    t.cache.forget('k1');
    const forgot = t.cache.mark();
    expect(forgot).not.toBe(first);
    t.cache.clear();
    expect(t.cache.mark()).not.toBe(forgot);
    hearing = false;
    const unheard = t.cache.mark();
    t.advance(999);
    expect(t.cache.mark()).toBe(unheard);
    t.advance(1);
    expect(t.cache.mark()).not.toBe(unheard);
  });
});

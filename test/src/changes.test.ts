/**
 * What lets the mount keep storage answers (issue 5): the change mark moves after every committed
 * write, this connection's at once and another connection's within 100 ms; the next expiry is known;
 * a bounded directory listing says when it was cut short.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { openCore, seedStore } from '../helpers/core.js';

describe('change mark', () => {
  it('stays put while nothing is written and moves after each committed write', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'a' });
    const before = core.storage.changeMark();
    await core.service.getMemory(core.caller, store.id, (await core.storage.getMemoryMetaByPath(store.id, '/a.md'))!.id);
    expect(core.storage.changeMark()).toBe(before);
    await core.service.createMemory(core.caller, store.id, { path: '/b.md', content: 'b' });
    const after = core.storage.changeMark();
    expect(after).not.toBe(before);
    expect(core.storage.changeMark()).toBe(after);
  });

  it('stays put while the search index catches up, which changes no memory', async () => {
    const core = await openCore();
    await seedStore(core.service, core.caller, { '/a.md': 'a', '/b.md': 'b' });
    const before = core.storage.changeMark();
    expect(await core.service.indexSearchBacklog(100)).toBe(0);
    expect(core.storage.changeMark()).toBe(before);
  });

  it('moves within 100 ms after another connection commits', async () => {
    // Only Date is faked: the mark's clock moves past the 100 ms when the test says, not by waiting.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'a' });
    const before = core.storage.changeMark();
    const other = openSqliteStorage(core.file);
    await other.setMemoryAttrs(store.id, (await other.getMemoryMetaByPath(store.id, '/a.md'))!.id, { mode: 0o600 }, new Date().toISOString());
    await other.close();
    vi.setSystemTime(Date.now() + 150);
    expect(core.storage.changeMark()).not.toBe(before);
  });

  it('names the next expiry after a moment, ignoring memories without one', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/keep.md': 'k' });
    expect(await core.storage.nextExpiry(store.id, new Date().toISOString())).toBeNull();
    await core.service.createMemory(core.caller, store.id, { path: '/soon.md', content: 's', expiry: { ttlSeconds: 60 } });
    await core.service.createMemory(core.caller, store.id, { path: '/later.md', content: 'l', expiry: { ttlSeconds: 3600 } });
    const next = (await core.storage.nextExpiry(store.id, new Date().toISOString()))!;
    const inMs = Date.parse(next) - Date.now();
    expect(inMs).toBeGreaterThan(50_000);
    expect(inMs).toBeLessThanOrEqual(60_000);
  });
});

describe('bounded directory listing', () => {
  it('returns everything without a limit, and says when a limit cut it short', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/d/a.md': 'a', '/d/b.md': 'b', '/d/sub/c.md': 'c' });
    const all = await core.storage.listDirectory(store.id, '/d');
    expect([all.files.map((f) => f.path), all.dirs, all.truncated]).toEqual([['/d/a.md', '/d/b.md'], ['sub'], undefined]);
    expect((await core.storage.listDirectory(store.id, '/d', 3)).truncated).toBeUndefined();
    const cut = await core.storage.listDirectory(store.id, '/d', 2);
    expect([cut.files.length + cut.dirs.length, cut.truncated]).toEqual([2, true]);
  });
});

/**
 * The search index's heavy turns (search-index.ts HEAVY_TURN: a store with a retention re-indexed
 * with secure-delete, an erasure's merge steps) run on the writer thread's writable connection when
 * the storage has worker threads (sqlite/readers.ts), as a directory move does: point reads answer
 * while one runs, writes wait for its commit, and it is counted as this process's own write. The
 * cheap turns (re-indexing without secure-delete) stay on the serving connection, which writes them
 * without moving the change mark. Where a turn ran is seen by that mark.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openCore, versionQuery, withRaw, type Core } from '../helpers/core.js';

/** Prose-like text: many distinct words (each starting with `letter`), which secure-delete takes out page by page. */
function prose(seed: number, letter: string, words = 600): string {
  let x = seed + 1;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.push(`${letter}${(x % 5000).toString(36)}q`);
  }
  return out.join(' ');
}

async function indexAll(storage: Core['storage']): Promise<void> {
  while ((await storage.indexSearchBacklog(1000)) > 0);
}

/** `n` notes written in a store (words in a…) and indexed, then each edited (words in b…): their re-indexing is queued. */
async function editsQueued(core: Core, storeId: string, n: number): Promise<void> {
  const notes = [];
  for (let i = 0; i < n; i++) notes.push(await core.service.createMemory(core.caller, storeId, { path: `/n${i}.md`, content: prose(i, 'a') }));
  await indexAll(core.storage);
  for (const [i, m] of notes.entries()) await core.service.updateMemory(core.caller, storeId, m.id, { content: prose(i, 'b') });
}

/** A bigger index, so that each word secure-delete takes out has pages to rewrite: 2,000 notes in one transaction. */
function bigIndex(core: Core, storeId: string): void {
  const now = new Date().toISOString();
  core.storage.importWrites(storeId, Array.from({ length: 2000 }, (_, i) => ({
    memoryId: core.service.ids('memory'), operation: 'created' as const, path: `/bulk/n${i}.md`, content: prose(i + 5000, 'a'),
    versionId: core.service.ids('version'), now, actor: core.caller.actor,
  })));
}

/** This process's threads (Linux task ids) whose nice value is 10, as the reader threads run. */
function nicedThreads(): Set<string> {
  const niced = new Set<string>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command name: the state is the 3rd field, the nice value the 19th.
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16] === '10') niced.add(tid);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return niced;
}

const search = async (core: Core, storeId: string, q: string) =>
  (await core.service.searchMemories(core.caller, storeId, { q, mode: 'fts', pathPrefix: '/', limit: 100, page: null })).data.length;

describe('the search index on the writer thread', () => {
  it('re-indexes a store with a retention there, answering point reads meanwhile and holding writes back until it commits', async () => {
    const core = await openCore({ readers: 2 });
    const kept = await core.service.createStore(core.caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 50 } });
    const other = await core.service.createStore(core.caller, { name: 'other', description: '', metadata: {} });
    await core.service.createMemory(core.caller, other.id, { path: '/probe.md', content: 'probe' });
    bigIndex(core, other.id);
    await editsQueued(core, kept.id, 40);
    const [before, after] = [prose(0, 'a').split(' ')[0]!, prose(0, 'b').split(' ')[0]!];
    const own = core.storage.ownWriteMark();

    const done: string[] = [];
    const turn = core.storage.indexSearchBacklog(1000).then(() => done.push('index'));
    // The turn's own microtasks come first, then a reader thread at work (and starting) for longer.
    await new Promise((r) => setTimeout(r, 5));
    const read = core.storage.getMemoryByPath(other.id, '/probe.md').then((m) => done.push(`read ${m?.content}`));
    const write = core.service.createMemory(core.caller, other.id, { path: '/later.md', content: 'later' }).then(() => done.push('write'));
    await Promise.all([turn, read, write]);

    expect(done).toEqual(['read probe', 'index', 'write']);
    expect(core.storage.ownWriteMark()).toBeGreaterThan(own);
    await indexAll(core.storage);
    expect(await search(core, kept.id, before)).toBe(0);
    expect(await search(core, kept.id, after)).toBeGreaterThan(0);
    // Secure-delete there too: the store is not noted for a later erasure.
    expect(withRaw(core.file, (raw) => raw.prepare('SELECT count(*) FROM search_remnants').pluck().get())).toBe(0);
  });

  it('re-indexes a store without a retention on the serving connection, which leaves the change mark where it was', async () => {
    const core = await openCore({ readers: 2 });
    const store = await core.service.createStore(core.caller, { name: 'plain', description: '', metadata: {} });
    await editsQueued(core, store.id, 10);
    const own = core.storage.ownWriteMark();
    const mark = core.storage.changeMark();

    await indexAll(core.storage);

    expect(core.storage.ownWriteMark()).toBe(own);
    expect(core.storage.changeMark()).toBe(mark);
    expect(withRaw(core.file, (raw) => raw.prepare('SELECT store_id FROM search_remnants').pluck().all())).toEqual([store.id]);
  });

  it('ends a cheap turn before the first text that wants secure-delete, which then goes there in a turn of its own', async () => {
    const core = await openCore({ readers: 2 });
    const kept = await core.service.createStore(core.caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 50 } });
    await editsQueued(core, kept.id, 1);
    // Queued ahead of the edit (lower seq), a memory with no text to take out: a deleted store's, whose rows are gone.
    withRaw(core.file, (raw) => raw.prepare('INSERT INTO search_backlog (seq, indexed_version) VALUES (0, NULL)').run());
    const queued = () => withRaw(core.file, (raw) => raw.prepare('SELECT seq FROM search_backlog ORDER BY seq').pluck().all());
    const own = core.storage.ownWriteMark();

    // The serving connection takes the first memory and stops before the edit.
    expect(await core.storage.indexSearchBacklog(1000)).toBe(1);
    expect(queued()).toHaveLength(1);
    expect(core.storage.ownWriteMark()).toBe(own);
    // The edit is the next turn, on the writer thread (its commit moves the mark).
    expect(await core.storage.indexSearchBacklog(1000)).toBe(0);
    expect(queued()).toEqual([]);
    expect(core.storage.ownWriteMark()).toBe(own + 1);
    expect(await search(core, kept.id, prose(0, 'b').split(' ')[0]!)).toBe(1);
  });

  it('runs an erasure\'s merge steps there, each counted as this process\'s write, until nothing is left to erase', async () => {
    const core = await openCore({ readers: 2 });
    const store = await core.service.createStore(core.caller, { name: 'plain', description: '', metadata: {} });
    await editsQueued(core, store.id, 30);
    await indexAll(core.storage);
    const m = await core.service.updateMemory(core.caller, store.id, (await core.storage.getMemoryByPath(store.id, '/n0.md'))!.id, { content: 'rewritten again' });
    await indexAll(core.storage);
    const moved: number[] = [];
    const step = core.storage.eraseSearchRemnants!;
    core.storage.eraseSearchRemnants = async () => {
      const own = core.storage.ownWriteMark();
      const more = await step();
      moved.push(core.storage.ownWriteMark() - own);
      return more;
    };
    const earlier = await core.storage.listVersions(store.id, versionQuery({ memoryId: m.id }));

    await core.service.redactVersion(core.caller, store.id, earlier.data[1]!.id);

    // Every step moved the mark once (its commit, made on the reader thread's connection).
    expect(moved.length).toBeGreaterThan(1);
    expect(moved).toEqual(moved.map(() => 1));
    expect(withRaw(core.file, (raw) => raw.prepare('SELECT count(*) FROM search_remnants').pluck().get())).toBe(0);
    expect(await search(core, store.id, prose(0, 'b').split(' ')[0]!)).toBe(0);
    expect(await search(core, store.id, 'rewritten')).toBe(1);
  });

  it('runs the writes on a thread of their own at the process\'s priority, the searches on reader threads at nice 10', async () => {
    const core = await openCore({ readers: 2 });
    const kept = await core.service.createStore(core.caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 50 } });
    await editsQueued(core, kept.id, 3);
    const before = nicedThreads();
    const started = () => [...nicedThreads()].filter((tid) => !before.has(tid));
    const own = core.storage.ownWriteMark();

    await core.storage.indexSearchBacklog(1000);
    expect(core.storage.ownWriteMark()).toBeGreaterThan(own);
    expect(started()).toEqual([]);
    await search(core, kept.id, 'anything');
    expect(started()).toHaveLength(1);
  });

  it('runs an erasure there even after a heavy turn there found none due: the serving connection marks erasures, not that one', async () => {
    const core = await openCore({ readers: 2 });
    const kept = await core.service.createStore(core.caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 50 } });
    await editsQueued(core, kept.id, 3);
    const own = core.storage.ownWriteMark();
    // A heavy turn: the writer thread's index looks for a due erasure first, and finds none.
    await indexAll(core.storage);
    expect(core.storage.ownWriteMark()).toBeGreaterThan(own);
    const store = await core.service.createStore(core.caller, { name: 'plain', description: '', metadata: {} });
    await editsQueued(core, store.id, 10);
    await indexAll(core.storage);
    const m = (await core.storage.getMemoryByPath(store.id, '/n0.md'))!;
    const earlier = await core.storage.listVersions(store.id, versionQuery({ memoryId: m.id }));

    await core.service.redactVersion(core.caller, store.id, earlier.data[1]!.id);

    // Merged to the end: the store's note goes with the last step.
    expect(withRaw(core.file, (raw) => raw.prepare('SELECT count(*) FROM search_remnants').pluck().get())).toBe(0);
  });
});

/**
 * The Storage port's conformance suite (STYLE rule 4): every adapter runs this one file. It talks to
 * the port directly, without the service, and pins what each operation does on its own.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { sha256Hex } from '../../src/content.js';
import { codeOf } from '../helpers/core.js';
import { newId } from '../../src/ids.js';
import type { Storage, WriteStamp } from '../../src/storage/port.js';
import type { Actor, MemoryListItem, MemoryListQuery, Session, Store, StoreListQuery, VersionListQuery } from '../../src/types.js';

export type MakeStorage = () => Storage;

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

/** A fresh storage holding one default workspace, plus small builders for the port's inputs. */
function fixture(makeStorage: MakeStorage) {
  const storage = makeStorage();
  onTestFinished(() => storage.close());
  let tick = 0;
  const now = () => new Date(T0 + 1000 * tick++).toISOString();
  const workspace = { id: newId('workspace'), name: 'default', createdAt: now() };
  storage.insertWorkspace(workspace, true);
  const actor: Actor = { type: 'api_actor', apiKeyId: newId('apiKey') };
  const stamp = (a: Actor = actor): WriteStamp => ({ actor: a, now: now(), versionId: newId('version') });

  function addStore(name = 'notes', workspaceId = workspace.id): Store {
    const at = now();
    const store: Store = { id: newId('store'), workspaceId, name, description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
    storage.insertStore(store);
    return store;
  }

  function addMemory(storeId: string, path: string, content = `content of ${path}`, a: Actor = actor) {
    return storage.createMemory({ ...stamp(a), storeId, memoryId: newId('memory'), path, content });
  }

  return { storage, workspace, actor, now, stamp, addStore, addMemory };
}


const memQ = (q: Partial<MemoryListQuery> = {}): MemoryListQuery => ({ pathPrefix: '/', depth: 0, limit: 100, page: null, view: 'basic', ...q });
const verQ = (q: Partial<VersionListQuery> = {}): VersionListQuery => ({
  memoryId: null, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null,
  createdGte: null, createdLte: null, limit: 100, page: null, view: 'full', ...q,
});
const storeQ = (q: Partial<StoreListQuery> = {}): StoreListQuery => ({ includeArchived: false, createdGte: null, createdLte: null, limit: 100, page: null, ...q });
const paths = (items: MemoryListItem[]) => items.map((i) => (i.type === 'memory' ? i.memory.path : `${i.path} (prefix)`));

export function runStorageSuite(makeStorage: MakeStorage): void {
  describe('workspaces and api keys', () => {
    it('a fresh storage has no default workspace', () => {
      const storage = makeStorage();
      onTestFinished(() => storage.close());
      expect(storage.defaultWorkspace()).toBeNull();
      expect(storage.countApiKeys()).toBe(0);
    });

    it('the default workspace is the one inserted as default', () => {
      const { storage, workspace } = fixture(makeStorage);
      storage.insertWorkspace({ id: newId('workspace'), name: 'other', createdAt: workspace.createdAt }, false);
      expect(storage.defaultWorkspace()).toEqual(workspace);
    });

    it('an api key is found by its hash only, and counted', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ci', role: 'admin' as const, storeIds: null, allWorkspaces: false, createdAt: now(), revokedAt: null };
      storage.insertApiKey(key, 'a'.repeat(64));
      expect(storage.findApiKeyByHash('a'.repeat(64))).toEqual(key);
      expect(storage.findApiKeyByHash('b'.repeat(64))).toBeNull();
      expect(storage.countApiKeys()).toBe(1);
    });
  });

  describe('stores', () => {
    it('a store reads back as inserted, only inside its workspace', () => {
      const { storage, addStore } = fixture(makeStorage);
      const s = addStore();
      expect(storage.getStore(s.workspaceId, s.id)).toEqual(s);
      expect(storage.getStoreById(s.id)).toEqual(s);
      expect(storage.getStore(newId('workspace'), s.id)).toBeNull();
      expect(storage.getStore(s.workspaceId, newId('store'))).toBeNull();
    });

    it('stores list newest first, page by page, without archived ones unless asked', async () => {
      const { storage, workspace, now, addStore } = fixture(makeStorage);
      const made = Array.from({ length: 5 }, (_, i) => addStore(`s${i}`));
      storage.archiveStore(workspace.id, made[1]!.id, now());
      const first = await storage.listStores(workspace.id, storeQ({ limit: 2 }));
      expect(first.data.map((s) => s.name)).toEqual(['s4', 's3']);
      const second = await storage.listStores(workspace.id, storeQ({ limit: 2, page: first.nextPage }));
      expect(second.data.map((s) => s.name)).toEqual(['s2', 's0']);
      expect(second.nextPage).toBeNull();
      expect((await storage.listStores(workspace.id, storeQ({ includeArchived: true }))).data.map((s) => s.name)).toEqual(['s4', 's3', 's2', 's1', 's0']);
    });

    it('a store update merges metadata and keeps untouched fields', () => {
      const { storage, workspace, now, addStore } = fixture(makeStorage);
      const s = addStore();
      storage.updateStore(workspace.id, s.id, { metadata: { a: '1', b: '2' } }, now());
      const at = now();
      const updated = storage.updateStore(workspace.id, s.id, { description: 'd', metadata: { a: null, c: '3' } }, at);
      expect(updated).toMatchObject({ name: 'notes', description: 'd', metadata: { b: '2', c: '3' }, updatedAt: at });
      expect(storage.getStore(workspace.id, s.id)).toEqual(updated);
    });

    it('archiving twice keeps the first archive time', () => {
      const { storage, workspace, now, addStore } = fixture(makeStorage);
      const s = addStore();
      const first = storage.archiveStore(workspace.id, s.id, now());
      const again = storage.archiveStore(workspace.id, s.id, now());
      expect(again.archivedAt).toBe(first.archivedAt);
      expect(storage.getStore(workspace.id, s.id)?.archivedAt).toBe(first.archivedAt);
    });

    it('deleting a store removes it with its memories and versions; unknown stores are not_found', async () => {
      const { storage, workspace, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const keep = addStore('keep');
      const m = addMemory(s.id, '/a');
      addMemory(keep.id, '/a');
      storage.deleteStore(workspace.id, s.id);
      expect(storage.getStore(workspace.id, s.id)).toBeNull();
      expect(storage.getMemory(s.id, m.id)).toBeNull();
      expect(storage.getVersion(s.id, m.versionId)).toBeNull();
      expect((await storage.listMemories(keep.id, memQ())).data).toHaveLength(1);
      expect(codeOf(() => storage.deleteStore(workspace.id, s.id))).toBe('not_found');
      expect(codeOf(() => storage.deleteStore(newId('workspace'), keep.id))).toBe('not_found');
      expect(await storage.integrityCheck()).toEqual([]);
    });
  });

  describe('memories', () => {
    it('create stores the content with its sha256 and size and appends a created version', () => {
      const { storage, actor, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/notes/é.md', 'héllo');
      expect(m).toMatchObject({ path: '/notes/é.md', content: 'héllo', contentSha256: sha256Hex('héllo'), contentSizeBytes: 6, mode: 0o644 });
      expect(storage.getMemory(s.id, m.id)).toEqual(m);
      expect(storage.getMemoryByPath(s.id, '/notes/é.md')).toEqual(m);
      const { content: _content, ...meta } = m;
      expect(storage.getMemoryMetaByPath(s.id, '/notes/é.md')).toEqual(meta);
      expect(storage.getVersion(s.id, m.versionId)).toMatchObject({
        memoryId: m.id, operation: 'created', path: m.path, content: 'héllo', contentSha256: m.contentSha256,
        contentSizeBytes: 6, createdAt: m.createdAt, createdBy: actor, redactedAt: null, redactedBy: null,
      });
    });

    it('a memory is invisible from another store', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const m = addMemory(addStore().id, '/a');
      const other = addStore('other');
      expect(storage.getMemory(other.id, m.id)).toBeNull();
      expect(storage.getMemoryByPath(other.id, '/a')).toBeNull();
      expect(storage.getVersion(other.id, m.versionId)).toBeNull();
    });

    it('a create on an overlapping path fails and leaves no version behind', async () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const a = addMemory(s.id, '/a/b');
      for (const path of ['/a/b', '/a', '/a/b/c']) {
        const err = (() => {
          try {
            storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path, content: 'x' });
          } catch (e) {
            return e;
          }
          return null;
        })();
        expect(err).toMatchObject({ code: 'path_conflict', details: { conflicting_path: '/a/b', conflicting_memory_id: a.id } });
      }
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    it('an update reports whether it changed anything, and a no-op appends no version', async () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a', 'one');
      const same = storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'one' });
      expect(same).toEqual({ memory: m, changed: false });
      const st = stamp();
      const changed = storage.updateMemory({ ...st, storeId: s.id, memoryId: m.id, content: 'two', path: '/b' });
      expect(changed.changed).toBe(true);
      expect(changed.memory).toMatchObject({ id: m.id, path: '/b', content: 'two', versionId: st.versionId, updatedAt: st.now, createdAt: m.createdAt });
      expect(storage.getMemory(s.id, m.id)).toEqual(changed.memory);
      expect((await storage.listVersions(s.id, verQ())).data.map((v) => v.operation)).toEqual(['modified', 'created']);
    });

    it('update and delete of an unknown memory are not_found', () => {
      const { storage, stamp, addStore } = fixture(makeStorage);
      const s = addStore();
      expect(codeOf(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), content: 'x' }))).toBe('not_found');
      expect(codeOf(() => storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory') }))).toBe('not_found');
    });

    it('a delete removes the memory and appends a deleted version holding only the path', () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      const st = stamp();
      storage.deleteMemory({ ...st, storeId: s.id, memoryId: m.id });
      expect(storage.getMemory(s.id, m.id)).toBeNull();
      expect(storage.getVersion(s.id, st.versionId)).toMatchObject({
        memoryId: m.id, operation: 'deleted', path: '/a', content: null, contentSha256: null, contentSizeBytes: null,
      });
    });

    it('a memory mode is kept and changes no version', async () => {
      const { storage, now, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      storage.setMemoryAttrs(s.id, m.id, { mode: 0o600 }, now());
      expect(storage.getMemory(s.id, m.id)?.mode).toBe(0o600);
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    describe('kept attributes (times and owner)', () => {
    it('a new memory derives every time and its owner: all kept attributes are null', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      expect(m).toMatchObject({ atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null });
      expect(storage.getMemoryMetaByPath(s.id, '/a')).toMatchObject({ atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null });
    });

    it('times and owner are set without a version, to the microsecond, and the ctime moves to the time of the change', async () => {
      const { storage, now, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      const at = now();
      storage.setMemoryAttrs(s.id, m.id, { atimeMs: 1_000_000_000_123.456, mtimeMs: 1_500_000_000_000.001, uid: 1000, gid: 2000 }, at);
      const kept = { atimeMs: 1_000_000_000_123.456, mtimeMs: 1_500_000_000_000.001, ctimeMs: Date.parse(at), uid: 1000, gid: 2000 };
      expect(storage.getMemory(s.id, m.id)).toMatchObject(kept);
      expect(storage.getMemoryMetaByPath(s.id, '/a')).toMatchObject(kept);
      expect(storage.listDirectory(s.id, '/').files[0]).toMatchObject(kept);
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    it('setting only the mtime leaves the atime where it was (touch -m), and only the uid leaves the gid', () => {
      const { storage, now, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      storage.setMemoryAttrs(s.id, m.id, { mtimeMs: 5000 }, now());
      storage.setMemoryAttrs(s.id, m.id, { uid: 7 }, now());
      expect(storage.getMemory(s.id, m.id)).toMatchObject({ atimeMs: Date.parse(m.updatedAt), mtimeMs: 5000, uid: 7, gid: null });
    });

    it('new content sets mtime and ctime back to the save time, and keeps the atime and the owner', () => {
      const { storage, stamp, now, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      storage.setMemoryAttrs(s.id, m.id, { atimeMs: 1000, mtimeMs: 2000, uid: 5, gid: 6 }, now());
      const after = storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' }).memory;
      const expected = { atimeMs: 1000, mtimeMs: null, ctimeMs: null, uid: 5, gid: 6 };
      expect(after).toMatchObject(expected);
      expect(storage.getMemory(s.id, m.id)).toMatchObject(expected);
    });

    it('new content freezes an atime that followed the mtime, so reads of the old atime stay true', () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' });
      expect(storage.getMemory(s.id, m.id)).toMatchObject({ atimeMs: Date.parse(m.updatedAt), mtimeMs: null });
    });

    it('a save can carry an mtime set after its last write (cp -p), which then survives the new version', () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'copied', attrs: { mtimeMs: 1234.5, uid: 9 } });
      expect(storage.getMemory(s.id, m.id)).toMatchObject({ mtimeMs: 1234.5, ctimeMs: null, uid: 9 });
    });

    it('a rename keeps the mtime and moves the ctime (it follows the rename\'s updated_at)', () => {
      const { storage, stamp, now, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const a = addMemory(s.id, '/a');
      const b = addMemory(s.id, '/d/b');
      storage.setMemoryAttrs(s.id, b.id, { mtimeMs: 777 }, now());
      const moved = storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, path: '/c' }).memory;
      expect(moved).toMatchObject({ mtimeMs: Date.parse(a.updatedAt), ctimeMs: null });
      expect(moved.updatedAt).not.toBe(a.updatedAt);
      storage.moveTree({ storeId: s.id, from: '/d', to: '/e', actor: { type: 'api_actor', apiKeyId: 'k' }, now: now(), versionIds: () => newId('version') });
      expect(storage.getMemoryByPath(s.id, '/e/b')).toMatchObject({ mtimeMs: 777, ctimeMs: null });
    });

    it('a mount save creates a memory with the attributes its file was given, and a save of the same bytes still keeps new ones', async () => {
      const { storage, stamp, addStore } = fixture(makeStorage);
      const s = addStore();
      const input = { storeId: s.id, path: '/a', content: 'x', memoryId: newId('memory'), mode: 0o600 };
      const created = storage.saveMemoryAt({ ...stamp(), ...input, attrs: { atimeMs: 10, mtimeMs: 20, uid: 1, gid: 2 } });
      expect(created.memory).toMatchObject({ mode: 0o600, atimeMs: 10, mtimeMs: 20, ctimeMs: null, uid: 1, gid: 2 });
      expect(storage.getMemory(s.id, input.memoryId)).toMatchObject({ mode: 0o600, atimeMs: 10, mtimeMs: 20, ctimeMs: null, uid: 1, gid: 2 });
      const st = stamp();
      const again = storage.saveMemoryAt({ ...st, ...input, mode: 0o640, attrs: { mtimeMs: 30 } });
      expect(again.changed).toBe(false);
      expect(storage.getMemory(s.id, input.memoryId)).toMatchObject({ mode: 0o640, atimeMs: 10, mtimeMs: 30, ctimeMs: Date.parse(st.now), uid: 1, gid: 2 });
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    it('setting attributes of a missing memory is not_found, and of an archived store\'s memory is refused', () => {
      const { storage, now, addStore, addMemory, workspace } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      expect(codeOf(() => storage.setMemoryAttrs(s.id, newId('memory'), { uid: 1 }, now()))).toBe('not_found');
      storage.archiveStore(workspace.id, s.id, now());
      expect(codeOf(() => storage.setMemoryAttrs(s.id, m.id, { uid: 1 }, now()))).toBe('archived');
      expect(storage.getMemory(s.id, m.id)?.uid).toBeNull();
    });
    });

    it('lists are ordered by path in binary order and page without gaps', async () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      for (const p of ['/b', '/B', '/a/z', '/a/b/c', '/a-b', '/é']) addMemory(s.id, p);
      const all = await paths((await storage.listMemories(s.id, memQ())).data);
      expect(all).toEqual(['/B', '/a-b', '/a/b/c', '/a/z', '/b', '/é']);
      const pages: string[] = [];
      let page: string | null = null;
      do {
        const p = await storage.listMemories(s.id, memQ({ limit: 1, page }));
        pages.push(...await paths(p.data));
        page = p.nextPage;
      } while (page);
      expect(pages).toEqual(all);
    });

    it('depth 1 rolls deeper paths into prefixes', async () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      for (const p of ['/a/b/c', '/a/d', '/a-b', '/z']) addMemory(s.id, p);
      expect(await paths((await storage.listMemories(s.id, memQ({ depth: 1 }))).data)).toEqual(['/a-b', '/a/ (prefix)', '/z']);
      expect(await paths((await storage.listMemories(s.id, memQ({ depth: 1, pathPrefix: '/a/' }))).data)).toEqual(['/a/b/ (prefix)', '/a/d']);
    });

    it('the full view carries content and the basic view leaves it out', async () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      addMemory(s.id, '/a', 'text');
      const [full] = (await storage.listMemories(s.id, memQ({ view: 'full' }))).data;
      const [basic] = (await storage.listMemories(s.id, memQ())).data;
      expect(full?.type === 'memory' && full.memory.content).toBe('text');
      expect(basic?.type === 'memory' && basic.memory.content).toBeUndefined();
    });

    it('a directory listing gives direct files and implied subdirectories', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      for (const p of ['/top.md', '/a/b/c.md', '/a/b/d.md', '/a/e.md', '/a-x/f.md']) addMemory(s.id, p);
      const root = storage.listDirectory(s.id, '/');
      expect(root.files.map((f) => f.path)).toEqual(['/top.md']);
      expect(root.dirs).toEqual(['a-x', 'a']);
      const a = storage.listDirectory(s.id, '/a');
      expect(a.files.map((f) => f.path)).toEqual(['/a/e.md']);
      expect(a.dirs).toEqual(['b']);
      expect(storage.hasMemoriesUnder(s.id, '/a')).toBe(true);
      expect(storage.hasMemoriesUnder(s.id, '/a/b')).toBe(true);
      expect(storage.hasMemoriesUnder(s.id, '/a/e.md')).toBe(false);
      expect(storage.hasMemoriesUnder(s.id, '/nothing')).toBe(false);
      expect(storage.hasMemoriesUnder(s.id, '/')).toBe(true);
    });
  });

  describe('versions', () => {
    it('versions list newest first and filter by memory, operation and actor', async () => {
      const { storage, stamp, addStore, addMemory, actor } = fixture(makeStorage);
      const s = addStore();
      const agent: Actor = { type: 'session_actor', sessionId: newId('session') };
      const a = addMemory(s.id, '/a');
      const b = addMemory(s.id, '/b', 'b', agent);
      storage.updateMemory({ ...stamp(agent), storeId: s.id, memoryId: a.id, content: 'a2' });
      storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: b.id });
      const ops = async (q: Partial<VersionListQuery>) => (await storage.listVersions(s.id, verQ(q))).data.map((v) => `${v.operation} ${v.memoryId === a.id ? 'a' : 'b'}`);
      expect(await ops({})).toEqual(['deleted b', 'modified a', 'created b', 'created a']);
      expect(await ops({ memoryId: b.id })).toEqual(['deleted b', 'created b']);
      expect(await ops({ operation: 'created' })).toEqual(['created b', 'created a']);
      expect(await ops({ sessionId: agent.sessionId })).toEqual(['modified a', 'created b']);
      expect(await ops({ apiKeyId: actor.type === 'api_actor' ? actor.apiKeyId : '' })).toEqual(['deleted b', 'created a']);
      expect(await ops({ apiKeyId: agent.sessionId })).toEqual([]);
      expect(await ops({ serviceAccountId: 'svcacct_x' })).toEqual([]);
    });

    it('the basic view of a version list leaves the content out', async () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      addMemory(s.id, '/a', 'text');
      const [v] = (await storage.listVersions(s.id, verQ({ view: 'basic' }))).data;
      expect(v).toMatchObject({ path: '/a', content: null, contentSizeBytes: 4 });
    });

    it('redaction nulls the body, records who and when, and leaves the memory alone', async () => {
      const { storage, stamp, addStore, addMemory, actor } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a', 'secret');
      const now = storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'clean' }).memory;
      const at = '2026-04-01T00:00:00.000Z';
      const red = storage.redactVersion(s.id, m.versionId, actor, at);
      expect(red).toMatchObject({ id: m.versionId, operation: 'created', memoryId: m.id, path: null, content: null, contentSha256: null, contentSizeBytes: null, redactedAt: at, redactedBy: actor });
      expect(storage.getVersion(s.id, m.versionId)).toEqual(red);
      expect(storage.getMemory(s.id, m.id)).toEqual(now);
      expect(await storage.integrityCheck()).toEqual([]);
    });

    it('redaction of the head version of a live memory is a conflict; an unknown version is not_found', () => {
      const { storage, addStore, addMemory, actor, now } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      expect(codeOf(() => storage.redactVersion(s.id, m.versionId, actor, now()))).toBe('conflict');
      expect(codeOf(() => storage.redactVersion(s.id, newId('version'), actor, now()))).toBe('not_found');
      expect(storage.getVersion(s.id, m.versionId)?.content).toBe(m.content);
    });

    it('versions page newest first with no duplicates or gaps', async () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a', 'v0');
      for (let i = 1; i < 12; i++) storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: `v${i}` });
      const seen: string[] = [];
      let page: string | null = null;
      do {
        const p = await storage.listVersions(s.id, verQ({ limit: 5, page }));
        seen.push(...p.data.map((v) => v.content ?? ''));
        page = p.nextPage;
      } while (page);
      expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `v${11 - i}`));
    });

    it('a page cursor the storage did not issue is refused', async () => {
      const { storage, addStore } = fixture(makeStorage);
      const s = addStore();
      expect(await codeOf(() => storage.listVersions(s.id, verQ({ page: 'nonsense' })))).toBe('invalid_request');
      expect(await codeOf(() => storage.listMemories(s.id, memQ({ page: 'page_' + Buffer.from('[1]').toString('base64url') })))).toBe('invalid_request');
      expect(await codeOf(() => storage.listStores(s.workspaceId, storeQ({ page: 'page_' + Buffer.from('{"s":"x"}').toString('base64url') })))).toBe('invalid_request');
    });
  });

  describe('sessions', () => {
    it('sessions read back, list newest first, and end once', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const make = (): Session => ({ id: newId('session'), workspaceId: workspace.id, status: 'active', resources: [], createdAt: now(), endedAt: null });
      const [a, b] = [make(), make()];
      storage.insertSession(a);
      storage.insertSession(b);
      expect(storage.getSession(workspace.id, a.id)).toEqual(a);
      expect(storage.getSession(newId('workspace'), a.id)).toBeNull();
      expect(storage.listSessions(workspace.id, 10, null).data.map((s) => s.id)).toEqual([b.id, a.id]);
      const first = storage.listSessions(workspace.id, 1, null);
      expect(storage.listSessions(workspace.id, 1, first.nextPage).data.map((s) => s.id)).toEqual([a.id]);
      const at = now();
      expect(storage.endSession(workspace.id, a.id, at)).toMatchObject({ status: 'ended', endedAt: at });
      expect(storage.endSession(workspace.id, a.id, now()).endedAt).toBe(at);
      expect(storage.listActiveSessions().map((s) => s.id)).toEqual([b.id]);
      expect(codeOf(() => storage.endSession(workspace.id, newId('session'), now()))).toBe('not_found');
    });
  });

  describe('commits that reach the disk later (durable: false)', () => {
    it('a write that is not durable at commit is stored at once and counted until syncCommits', async () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      expect(storage.unsyncedCommits()).toBe(0);
      storage.atomic(() => addMemory(s.id, '/a.md', 'a'), { durable: false });
      storage.atomic(() => addMemory(s.id, '/b.md', 'b'), { durable: false });
      expect(storage.getMemoryByPath(s.id, '/a.md')?.content).toBe('a');
      expect(storage.unsyncedCommits()).toBe(2);
      await storage.syncCommits();
      expect(storage.unsyncedCommits()).toBe(0);
      // Nothing pending: it resolves without a sync.
      await storage.syncCommits();
    });

    it('a durable write, or a non-durable one inside a durable transaction, leaves nothing to sync', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      addMemory(s.id, '/a.md');
      storage.atomic(() => storage.atomic(() => addMemory(s.id, '/b.md'), { durable: false }));
      expect(storage.unsyncedCommits()).toBe(0);
    });

    it('a non-durable transaction that throws rolls back whole and counts nothing', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      expect(() => storage.atomic(() => {
        addMemory(s.id, '/a.md');
        throw new Error('refused');
      }, { durable: false })).toThrow('refused');
      expect(storage.getMemoryByPath(s.id, '/a.md')).toBeNull();
      expect(storage.unsyncedCommits()).toBe(0);
    });
  });
}

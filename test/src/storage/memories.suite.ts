/** The memories role's conformance suite: memories, their kept attributes, and their append-only versions. */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/domain/content.js';
import { MnemoError } from '../../../src/domain/errors.js';
import type { WriteFound } from '../../../src/storage/port.js';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import type { Actor, Caller, Store, VersionListQuery } from '../../../src/domain/types.js';
import { writeAdmission } from '../../../src/service/admission.js';
import { DEFAULT_LIMITS } from '../../../src/service/limits.js';
import { WRITE_PURGE_MAX } from '../../../src/storage/common/version-rows.js';
import { fixture, memQ, paths, rejectionCode, storeQ, thrown, verQ, type MakeStorage } from './fixture.js';

export function runMemorySuite(makeStorage: MakeStorage): void {
  describe('memories', () => {
    it('create stores the content with its sha256 and size and appends a created version', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/notes/é.md', 'héllo');
      expect(m).toMatchObject({ path: '/notes/é.md', content: 'héllo', contentSha256: sha256Hex('héllo'), contentSizeBytes: 6, mode: 0o644 });
      expect(await storage.getMemory(s.id, m.id)).toEqual(m);
      expect(await storage.getMemoryByPath(s.id, '/notes/é.md')).toEqual(m);
      const { content: _content, ...meta } = m;
      expect(await storage.getMemoryMetaByPath(s.id, '/notes/é.md')).toEqual(meta);
      expect(await storage.getVersion(s.id, m.versionId)).toMatchObject({
        memoryId: m.id, operation: 'created', path: m.path, content: 'héllo', contentSha256: m.contentSha256,
        contentSizeBytes: 6, createdAt: m.createdAt, createdBy: actor, redactedAt: null, redactedBy: null,
      });
    });

    it('a memory is invisible from another store', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const m = await addMemory((await addStore()).id, '/a');
      const other = await addStore('other');
      expect(await storage.getMemory(other.id, m.id)).toBeNull();
      expect(await storage.getMemoryByPath(other.id, '/a')).toBeNull();
      expect(await storage.getVersion(other.id, m.versionId)).toBeNull();
    });

    it('a retrieve finds the store of the workspace and its memory in one lookup, and nothing from another workspace or store', async () => {
      const { storage, workspace, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'text');
      expect(await storage.getMemoryInStore(workspace.id, s.id, m.id)).toEqual({ storeFound: true, memory: m });
      expect(await storage.getMemoryInStore(workspace.id, s.id, newId('memory'))).toEqual({ storeFound: true, memory: null });
      const elsewhere = { id: newId('workspace'), name: 'other', createdAt: m.createdAt };
      await storage.insertWorkspace(elsewhere, false);
      expect(await storage.getMemoryInStore(elsewhere.id, s.id, m.id)).toEqual({ storeFound: false, memory: null });
      const other = await addStore('other');
      expect(await storage.getMemoryInStore(workspace.id, other.id, m.id)).toEqual({ storeFound: true, memory: null });
      expect(await storage.getMemoryInStore(workspace.id, newId('store'), m.id)).toEqual({ storeFound: false, memory: null });
    });

    it("a write shows its admission whether the store is the workspace's, its usage and the memory it replaces before it changes anything; a refusal writes nothing", async () => {
      const { storage, workspace, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'four');
      const seen: WriteFound[] = [];
      const admission = (workspaceId = workspace.id, refuse = false) => ({
        workspaceId,
        admit(found: WriteFound) {
          // What it finds before the write: `target` is read here, inside admit, as the rules read it.
          seen.push({ storeFound: found.storeFound, usage: found.usage, target: found.target });
          if (refuse) throw new MnemoError('limit_exceeded', 'no room');
        },
      });
      const created = await storage.createMemory({ ...stamp(), admission: admission(), storeId: s.id, memoryId: newId('memory'), path: '/b', content: 'xy' });
      expect(seen.pop()).toEqual({ storeFound: true, usage: { memories: 1, bytes: 4 }, target: null });
      await storage.updateMemory({ ...stamp(), admission: admission(), storeId: s.id, memoryId: m.id, content: 'five!' });
      expect(seen.pop()).toEqual({ storeFound: true, usage: { memories: 2, bytes: 6 }, target: { contentSizeBytes: 4 } });
      // An unknown memory: no target; the write then fails as it does without an admission.
      expect(await codeOf(() => storage.updateMemory({ ...stamp(), admission: admission(), storeId: s.id, memoryId: newId('memory'), content: 'x' }))).toBe('not_found');
      expect(seen.pop()).toMatchObject({ target: null });
      // A store of another workspace is no store to the admission; what follows is the admission's to decide, not the adapter's.
      const elsewhere = { id: newId('workspace'), name: 'other', createdAt: m.createdAt };
      await storage.insertWorkspace(elsewhere, false);
      await storage.deleteMemory({ ...stamp(), admission: admission(elsewhere.id), storeId: s.id, memoryId: created.id });
      expect(seen.pop()).toEqual({ storeFound: false, usage: { memories: 2, bytes: 7 }, target: { contentSizeBytes: 2 } });
      // Refused: nothing changes, whichever write it was.
      const versions = (await storage.listVersions(s.id, verQ())).data.length;
      const refused = [
        () => storage.createMemory({ ...stamp(), admission: admission(workspace.id, true), storeId: s.id, memoryId: newId('memory'), path: '/c', content: 'c' }),
        () => storage.updateMemory({ ...stamp(), admission: admission(workspace.id, true), storeId: s.id, memoryId: m.id, content: 'six' }),
        () => storage.deleteMemory({ ...stamp(), admission: admission(workspace.id, true), storeId: s.id, memoryId: m.id }),
      ];
      for (const write of refused) expect(await codeOf(write)).toBe('limit_exceeded');
      expect(seen).toHaveLength(3);
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(versions);
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 1, bytes: 5 });
      expect((await storage.getMemory(s.id, m.id))?.content).toBe('five!');
    });

    it("a mount's save, move and attribute change run the service's admission on what they find: another workspace's store is not found, a read-only key is forbidden, a full store refuses a new memory; nothing is written", async () => {
      const { storage, workspace, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'four');
      const session: Actor = { type: 'session_actor', sessionId: newId('session') };
      const mount: Caller = { workspaceId: workspace.id, actor: session };
      const elsewhere = { id: newId('workspace'), name: 'other', createdAt: m.createdAt };
      await storage.insertWorkspace(elsewhere, false);
      const reader: Caller = { workspaceId: workspace.id, actor: { type: 'api_actor', apiKeyId: newId('apiKey') }, grant: { role: 'read_only', storeIds: null } };
      // The service's own rules (service/admission.ts), with a store full at two memories or 10 bytes.
      const limits = { ...DEFAULT_LIMITS, maxMemories: 2, maxBytes: 10 };
      const save = (caller: Caller, path: string, content: string) => {
        const admission = writeAdmission(limits, caller, s.id, { newBytes: Buffer.byteLength(content), replaces: 'found' });
        return storage.saveMemoryAt({ ...stamp(session), admission, storeId: s.id, memoryId: newId('memory'), path, content });
      };
      const move = (caller: Caller, path: string) =>
        storage.moveMemory({ ...stamp(session), admission: writeAdmission(limits, caller, s.id, null), storeId: s.id, memoryId: m.id, path, replacedVersionId: newId('version') });

      const before = (await storage.listVersions(s.id, verQ())).data.length;
      expect(await codeOf(() => save({ ...mount, workspaceId: elsewhere.id }, '/b', 'b'))).toBe('not_found');
      expect(await codeOf(() => save(reader, '/b', 'b'))).toBe('forbidden');
      expect(await codeOf(() => move({ ...mount, workspaceId: elsewhere.id }, '/moved'))).toBe('not_found');
      expect(await codeOf(() => move(reader, '/moved'))).toBe('forbidden');
      // chmod, touch and chown are admitted the same way (they take no room).
      const chmod = (caller: Caller) => storage.setMemoryAttrs(s.id, m.id, { mode: 0o600 }, stamp().now, writeAdmission(limits, caller, s.id, null));
      expect(await codeOf(() => chmod({ ...mount, workspaceId: elsewhere.id }))).toBe('not_found');
      expect(await codeOf(() => chmod(reader))).toBe('forbidden');
      // Over the byte limit, whether the save adds a memory or replaces the one at its path.
      expect(await codeOf(() => save(mount, '/b', 'b'.repeat(7)))).toBe('limit_exceeded');
      expect(await codeOf(() => save(mount, '/a', 'a'.repeat(11)))).toBe('limit_exceeded');
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(before);
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 1, bytes: 4 });
      expect(await storage.getMemoryByPath(s.id, '/b')).toBeNull();
      expect(await storage.getMemory(s.id, m.id)).toEqual(m);

      // Admitted: a new memory while there is room, then the store is full; a save over a memory it
      // finds at its path (as many bytes) adds none and still goes in, a save at a new path does not.
      expect((await save(mount, '/b', 'bb')).changed).toBe(true);
      expect((await save(mount, '/a', 'ffff')).changed).toBe(true);
      expect(await codeOf(() => save(mount, '/c', 'c'))).toBe('limit_exceeded');
      expect(await storage.getMemoryByPath(s.id, '/c')).toBeNull();
      expect((await move(mount, '/moved')).path).toBe('/moved');
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 6 });
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(before + 3);
    });

    it('a create on an overlapping path fails and leaves no version behind', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const a = await addMemory(s.id, '/a/b');
      for (const path of ['/a/b', '/a', '/a/b/c']) {
        const err = await (async () => {
          try {
            await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path, content: 'x' });
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
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'one');
      const same = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'one' });
      expect(same).toEqual({ memory: m, changed: false });
      const st = stamp();
      const changed = await storage.updateMemory({ ...st, storeId: s.id, memoryId: m.id, content: 'two', path: '/b' });
      expect(changed.changed).toBe(true);
      expect(changed.memory).toMatchObject({ id: m.id, path: '/b', content: 'two', versionId: st.versionId, updatedAt: st.now, createdAt: m.createdAt });
      expect(await storage.getMemory(s.id, m.id)).toEqual(changed.memory);
      expect((await storage.listVersions(s.id, verQ())).data.map((v) => v.operation)).toEqual(['modified', 'created']);
    });

    it('update and delete of an unknown memory are not_found', async () => {
      const { storage, stamp, addStore } = await fixture(makeStorage);
      const s = await addStore();
      expect(await codeOf(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), content: 'x' }))).toBe('not_found');
      expect(await codeOf(() => storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory') }))).toBe('not_found');
    });

    it('a delete removes the memory and appends a deleted version holding only the path', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      const st = stamp();
      await storage.deleteMemory({ ...st, storeId: s.id, memoryId: m.id });
      expect(await storage.getMemory(s.id, m.id)).toBeNull();
      expect(await storage.getVersion(s.id, st.versionId)).toMatchObject({
        memoryId: m.id, operation: 'deleted', path: '/a', content: null, contentSha256: null, contentSizeBytes: null,
      });
    });

    it('a memory mode is kept and changes no version', async () => {
      const { storage, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      await storage.setMemoryAttrs(s.id, m.id, { mode: 0o600 }, now());
      expect((await storage.getMemory(s.id, m.id))?.mode).toBe(0o600);
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    describe('kept attributes (times and owner)', () => {
    it('a new memory derives every time and its owner: all kept attributes are null', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      expect(m).toMatchObject({ atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null });
      expect(await storage.getMemoryMetaByPath(s.id, '/a')).toMatchObject({ atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null });
    });

    it('times and owner are set without a version, to the microsecond, and the ctime moves to the time of the change', async () => {
      const { storage, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      const at = now();
      await storage.setMemoryAttrs(s.id, m.id, { atimeMs: 1_000_000_000_123.456, mtimeMs: 1_500_000_000_000.001, uid: 1000, gid: 2000 }, at);
      const kept = { atimeMs: 1_000_000_000_123.456, mtimeMs: 1_500_000_000_000.001, ctimeMs: Date.parse(at), uid: 1000, gid: 2000 };
      expect(await storage.getMemory(s.id, m.id)).toMatchObject(kept);
      expect(await storage.getMemoryMetaByPath(s.id, '/a')).toMatchObject(kept);
      expect((await storage.listDirectory(s.id, '/')).files[0]).toMatchObject(kept);
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    it('setting only the mtime leaves the atime where it was (touch -m), and only the uid leaves the gid', async () => {
      const { storage, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      await storage.setMemoryAttrs(s.id, m.id, { mtimeMs: 5000 }, now());
      await storage.setMemoryAttrs(s.id, m.id, { uid: 7 }, now());
      expect(await storage.getMemory(s.id, m.id)).toMatchObject({ atimeMs: Date.parse(m.updatedAt), mtimeMs: 5000, uid: 7, gid: null });
    });

    it('new content sets mtime and ctime back to the save time, and keeps the atime and the owner', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      await storage.setMemoryAttrs(s.id, m.id, { atimeMs: 1000, mtimeMs: 2000, uid: 5, gid: 6 }, now());
      const after = (await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' })).memory;
      const expected = { atimeMs: 1000, mtimeMs: null, ctimeMs: null, uid: 5, gid: 6 };
      expect(after).toMatchObject(expected);
      expect(await storage.getMemory(s.id, m.id)).toMatchObject(expected);
    });

    it('new content freezes an atime that followed the mtime, so reads of the old atime stay true', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' });
      expect(await storage.getMemory(s.id, m.id)).toMatchObject({ atimeMs: Date.parse(m.updatedAt), mtimeMs: null });
    });

    it('a save can carry an mtime set after its last write (cp -p), which then survives the new version', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'copied', attrs: { mtimeMs: 1234.5, uid: 9 } });
      expect(await storage.getMemory(s.id, m.id)).toMatchObject({ mtimeMs: 1234.5, ctimeMs: null, uid: 9 });
    });

    it('a rename keeps the mtime and moves the ctime (it follows the rename\'s updated_at)', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const a = await addMemory(s.id, '/a');
      const b = await addMemory(s.id, '/d/b');
      await storage.setMemoryAttrs(s.id, b.id, { mtimeMs: 777 }, now());
      const moved = (await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, path: '/c' })).memory;
      expect(moved).toMatchObject({ mtimeMs: Date.parse(a.updatedAt), ctimeMs: null });
      expect(moved.updatedAt).not.toBe(a.updatedAt);
      await storage.moveTree({ storeId: s.id, from: '/d', to: '/e', actor: { type: 'api_actor', apiKeyId: 'k' }, now: now(), versionIds: () => newId('version') });
      expect(await storage.getMemoryByPath(s.id, '/e/b')).toMatchObject({ mtimeMs: 777, ctimeMs: null });
    });

    it('a mount save creates a memory with the attributes its file was given, and a save of the same bytes still keeps new ones', async () => {
      const { storage, stamp, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const input = { storeId: s.id, path: '/a', content: 'x', memoryId: newId('memory'), mode: 0o600 };
      const created = await storage.saveMemoryAt({ ...stamp(), ...input, attrs: { atimeMs: 10, mtimeMs: 20, uid: 1, gid: 2 } });
      expect(created.memory).toMatchObject({ mode: 0o600, atimeMs: 10, mtimeMs: 20, ctimeMs: null, uid: 1, gid: 2 });
      expect(await storage.getMemory(s.id, input.memoryId)).toMatchObject({ mode: 0o600, atimeMs: 10, mtimeMs: 20, ctimeMs: null, uid: 1, gid: 2 });
      const st = stamp();
      const again = await storage.saveMemoryAt({ ...st, ...input, mode: 0o640, attrs: { mtimeMs: 30 } });
      expect(again.changed).toBe(false);
      expect(await storage.getMemory(s.id, input.memoryId)).toMatchObject({ mode: 0o640, atimeMs: 10, mtimeMs: 30, ctimeMs: Date.parse(st.now), uid: 1, gid: 2 });
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    it('setting attributes of a missing memory is not_found, and of an archived store\'s memory is refused', async () => {
      const { storage, now, addStore, addMemory, workspace } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      expect(await codeOf(() => storage.setMemoryAttrs(s.id, newId('memory'), { uid: 1 }, now()))).toBe('not_found');
      await storage.archiveStore(workspace.id, s.id, now());
      expect(await codeOf(() => storage.setMemoryAttrs(s.id, m.id, { uid: 1 }, now()))).toBe('archived');
      expect((await storage.getMemory(s.id, m.id))?.uid).toBeNull();
    });
    });

    it('lists are ordered by path in binary order and page without gaps', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (const p of ['/b', '/B', '/a/z', '/a/b/c', '/a-b', '/é']) await addMemory(s.id, p);
      const all = paths((await storage.listMemories(s.id, memQ())).data);
      expect(all).toEqual(['/B', '/a-b', '/a/b/c', '/a/z', '/b', '/é']);
      const pages: string[] = [];
      let page: string | null = null;
      do {
        const p = await storage.listMemories(s.id, memQ({ limit: 1, page }));
        pages.push(...paths(p.data));
        page = p.nextPage;
      } while (page);
      expect(pages).toEqual(all);
    });

    it('depth 1 rolls deeper paths into prefixes', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (const p of ['/a/b/c', '/a/d', '/a-b', '/z']) await addMemory(s.id, p);
      expect(paths((await storage.listMemories(s.id, memQ({ depth: 1 }))).data)).toEqual(['/a-b', '/a/ (prefix)', '/z']);
      expect(paths((await storage.listMemories(s.id, memQ({ depth: 1, pathPrefix: '/a/' }))).data)).toEqual(['/a/b/ (prefix)', '/a/d']);
    });

    it('the full view carries content and the basic view leaves it out', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a', 'text');
      const [full] = (await storage.listMemories(s.id, memQ({ view: 'full' }))).data;
      const [basic] = (await storage.listMemories(s.id, memQ())).data;
      expect(full?.type === 'memory' && full.memory.content).toBe('text');
      expect(basic?.type === 'memory' && basic.memory.content).toBeUndefined();
    });


    it('writes to an archived store are refused, even one that would change nothing', async () => {
      const { storage, workspace, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'one');
      await storage.archiveStore(workspace.id, s.id, now());
      const write = { storeId: s.id, memoryId: newId('memory'), path: '/b', content: 'x' };
      expect(await codeOf(() => storage.createMemory({ ...stamp(), ...write }))).toBe('archived');
      expect(await codeOf(() => storage.saveMemoryAt({ ...stamp(), ...write }))).toBe('archived');
      expect(await codeOf(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'one' }))).toBe('archived');
      expect(await codeOf(() => storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: m.id, path: '/c', replacedVersionId: newId('version') }))).toBe('archived');
      expect(await codeOf(() => storage.moveTree({ storeId: s.id, from: '/a', to: '/d', actor: { type: 'api_actor', apiKeyId: 'k' }, now: now(), versionIds: () => newId('version') }))).toBe('archived');
      expect(await codeOf(() => storage.createMemory({ ...stamp(), ...write, storeId: newId('store') }))).toBe('not_found');
      expect(await storage.getMemory(s.id, m.id)).toEqual(m);
    });

    it('an update or delete whose expected sha256 is not the current one fails, unless the update changes nothing', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'one');
      const stale = sha256Hex('older');
      expect(await codeOf(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two', expectedSha256: stale }))).toBe('precondition_failed');
      expect(await codeOf(() => storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id, expectedSha256: stale }))).toBe('precondition_failed');
      // A retry of an update that already landed is forgiven: the memory holds what was asked.
      expect((await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'one', expectedSha256: stale })).changed).toBe(false);
      const ok = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two', expectedSha256: m.contentSha256 });
      expect(ok.memory.content).toBe('two');
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id, expectedSha256: ok.memory.contentSha256 });
      expect(await storage.getMemory(s.id, m.id)).toBeNull();
    });

    it('an append onto text that changed meanwhile is kept after the newest text, once, and one that would pass the size limit is refused', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/log', 'start\n');
      const onto = m.contentSha256;
      // Another writer's append lands first.
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'start\nB\n', expectedSha256: onto, appended: 'B\n' });
      const a = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'start\nA\n', expectedSha256: onto, appended: 'A\n' });
      expect(a.changed).toBe(true);
      expect(a.memory).toMatchObject({ content: 'start\nB\nA\n', contentSha256: sha256Hex('start\nB\nA\n'), contentSizeBytes: 10 });
      expect((await storage.getMemory(s.id, m.id))!.content).toBe('start\nB\nA\n');
      // Onto the text it names, an append is the content sent.
      const c = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'start\nB\nA\nC\n', expectedSha256: a.memory.contentSha256, appended: 'C\n' });
      expect(c.memory.content).toBe('start\nB\nA\nC\n');
      // Replayed (onto 12 bytes), an append that would take the text past 102,400 bytes is refused, and nothing changes.
      const big = 'x'.repeat(102_400 - 11);
      expect(await codeOf(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'start\n' + big, expectedSha256: onto, appended: big }))).toBe('content_too_large');
      expect((await storage.getMemory(s.id, m.id))!.content).toBe('start\nB\nA\nC\n');
      expect((await storage.listVersions(s.id, verQ({ memoryId: m.id }))).data).toHaveLength(4);
    });

    it('a rename onto a path that would overlap another memory fails and changes nothing', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const dir = await addMemory(s.id, '/a/b');
      const m = await addMemory(s.id, '/x');
      for (const path of ['/a/b', '/a', '/a/b/c']) {
        expect(await thrown(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, path }))).toMatchObject({
          code: 'path_conflict', details: { conflicting_path: '/a/b', conflicting_memory_id: dir.id },
        });
      }
      expect((await storage.getMemory(s.id, m.id))?.path).toBe('/x');
    });

    it('a move by id replaces the memory at its destination, which gets a deleted version', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const a = await addMemory(s.id, '/a', 'a');
      const b = await addMemory(s.id, '/b', 'b');
      const replacedVersionId = newId('version');
      const moved = await storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: a.id, path: '/b', replacedVersionId });
      expect(moved).toMatchObject({ id: a.id, path: '/b', content: 'a' });
      expect(await storage.getMemory(s.id, b.id)).toBeNull();
      expect(await storage.getVersion(s.id, replacedVersionId)).toMatchObject({ memoryId: b.id, operation: 'deleted', path: '/b' });
      // A move onto its own path is no write.
      expect(await storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: a.id, path: '/b', replacedVersionId: newId('version') })).toEqual(moved);
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(4);
    });

    it('a directory move renames every memory below it, one modified version each, and leaves siblings', async () => {
      const { storage, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (const p of ['/d/a', '/d/e/b', '/d-x', '/dd']) await addMemory(s.id, p);
      const n = await storage.moveTree({ storeId: s.id, from: '/d', to: '/n/m', actor: { type: 'api_actor', apiKeyId: 'k' }, now: now(), versionIds: () => newId('version') });
      expect(n).toBe(2);
      expect(paths((await storage.listMemories(s.id, memQ())).data)).toEqual(['/d-x', '/dd', '/n/m/a', '/n/m/e/b']);
      expect((await storage.listVersions(s.id, verQ({ operation: 'modified' }))).data).toHaveLength(2);
    });

    it('a directory move of more memories than a page moves them all in commit order, each as a rename of it would, and back', async () => {
      const { storage, stamp, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const n = 1234;
      const name = (i: number) => String(i).padStart(4, '0');
      const expiresAt = '2099-01-01T00:00:00.000Z';
      await storage.atomic(async (tx) => {
        for (let i = 0; i < n; i++) await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: `/d/${name(i)}`, content: `text ${i}`, ...(i === 7 ? { expiresAt } : {}) });
      });
      const twin = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/twin', content: 'text 7', expiresAt });
      for (const m of [(await storage.getMemoryByPath(s.id, '/d/0007'))!, twin]) {
        await storage.setMemoryAttrs(s.id, m.id, { mode: 0o600, atimeMs: 4000, mtimeMs: 5000, uid: 7, gid: 8 }, '2026-03-02T00:00:00.000Z');
      }
      const before = (await storage.listChanges(s.id, { after: 0, limit: 2000 })).length;
      const at = now();
      const actor: Actor = { type: 'api_actor', apiKeyId: 'k' };
      expect(await storage.moveTree({ storeId: s.id, from: '/d', to: '/e/f', actor, now: at, versionIds: () => newId('version') })).toBe(n);
      const changes = await storage.listChanges(s.id, { after: before, limit: 2000 });
      expect(changes.map((c) => c.seq)).toEqual(Array.from({ length: n }, (_, i) => before + i + 1));
      expect(changes.map((c) => ('version' in c ? [c.version.operation, c.version.path] : []))).toEqual(Array.from({ length: n }, (_, i) => ['modified', `/e/f/${name(i)}`]));
      // What the move left is what a rename of the same memory at the same time leaves.
      await storage.moveMemory({ storeId: s.id, memoryId: twin.id, path: '/twin2', actor, now: at, versionId: newId('version'), replacedVersionId: newId('version') });
      const moved = (await storage.getMemoryByPath(s.id, '/e/f/0007'))!;
      const renamed = (await storage.getMemory(s.id, twin.id))!;
      const same = ({ id, path, versionId, createdAt, ...rest }: typeof moved) => rest;
      expect(same(moved)).toEqual(same(renamed));
      expect(moved).toMatchObject({ content: 'text 7', mode: 0o600, uid: 7, gid: 8, updatedAt: at, expiresAt });
      expect((await storage.listVersions(s.id, verQ({ memoryId: moved.id }))).data.map((v) => [v.operation, v.path, v.contentSha256])).toEqual([
        ['modified', '/e/f/0007', sha256Hex('text 7')], ['created', '/d/0007', sha256Hex('text 7')],
      ]);
      expect(await storage.moveTree({ storeId: s.id, from: '/e/f', to: '/d', actor, now: now(), versionIds: () => newId('version') })).toBe(n);
      expect((await storage.getMemoryByPath(s.id, `/d/${name(n - 1)}`))?.content).toBe(`text ${n - 1}`);
      expect((await storage.listMemories(s.id, memQ({ pathPrefix: '/e' }))).data).toEqual([]);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a directory move onto a path another memory holds fails whole, naming it', async () => {
      const { storage, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (const p of ['/d/a', '/d/b', '/e/b']) await addMemory(s.id, p);
      const move = () => storage.moveTree({ storeId: s.id, from: '/d', to: '/e', actor: { type: 'api_actor', apiKeyId: 'k' }, now: now(), versionIds: () => newId('version') });
      expect(await rejectionCode(move)).toBe('path_conflict');
      expect(paths((await storage.listMemories(s.id, memQ())).data)).toEqual(['/d/a', '/d/b', '/e/b']);
      // Into a directory that holds others (here the source's own parent): what meets none of them moves.
      await addMemory(s.id, '/d/x/y');
      expect(await storage.moveTree({ storeId: s.id, from: '/d/x', to: '/d', actor: { type: 'api_actor', apiKeyId: 'k' }, now: now(), versionIds: () => newId('version') })).toBe(1);
      expect(paths((await storage.listMemories(s.id, memQ())).data)).toEqual(['/d/a', '/d/b', '/d/y', '/e/b']);
    });

    it('a save by path creates the memory with the given id, then updates it in place', async () => {
      const { storage, stamp, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const memoryId = newId('memory');
      const first = await storage.saveMemoryAt({ ...stamp(), storeId: s.id, path: '/a', content: 'one', memoryId });
      expect(first).toMatchObject({ changed: true, memory: { id: memoryId, content: 'one' } });
      const second = await storage.saveMemoryAt({ ...stamp(), storeId: s.id, path: '/a', content: 'two', memoryId: newId('memory') });
      expect(second).toMatchObject({ changed: true, memory: { id: memoryId, content: 'two' } });
      expect((await storage.getMemoryByPath(s.id, '/a'))?.id).toBe(memoryId);
    });

    it('an expired memory is hidden from reads, and the next write to its store frees its path', async () => {
      const { storage, stamp, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      // The fixture's clock runs in the past: an expiry at its now has passed for the adapter's readers.
      const m = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'x', expiresAt: now() });
      expect(await storage.getMemory(s.id, m.id)).toBeNull();
      expect(await storage.getMemoryByPath(s.id, '/a')).toBeNull();
      const again = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'y' });
      expect(await storage.getMemoryByPath(s.id, '/a')).toEqual(again);
    });

    it('a write after a mass expiry purges a bounded number first, and every one in its way; the sweep takes the rest', async () => {
      const { storage, stamp, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const n = WRITE_PURGE_MAX + 50;
      await storage.atomic(async (tx) => {
        for (let i = 0; i < n; i++) {
          await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: `/t/${i}`, content: `t${i}`, expiresAt: '2026-03-01T06:00:00.000Z' });
        }
        // The last to expire, so past the bound, and in the way of the write below.
        await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/x/y', content: 'old', expiresAt: '2026-03-01T07:00:00.000Z' });
      });
      const before = (await storage.listChanges(s.id, { after: 0, limit: 1000 })).length;
      const later = '2026-03-02T00:00:00.000Z';
      await storage.createMemory({ ...stamp(), now: later, storeId: s.id, memoryId: newId('memory'), path: '/x', content: 'new' });
      const ops = (await storage.listChanges(s.id, { after: before, limit: 1000 })).map((c) => ('version' in c ? c.version.operation : 'pruned'));
      expect(ops.filter((o) => o === 'deleted')).toHaveLength(WRITE_PURGE_MAX + 1);
      expect(ops.at(-1)).toBe('created');
      expect(await storage.purgeExpiredMemories(later, 1000)).toBe(50);
      expect(paths((await storage.listMemories(s.id, memQ())).data)).toEqual(['/x']);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a directory move after a mass expiry purges every expired memory below its destination first', async () => {
      const { storage, stamp, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const n = WRITE_PURGE_MAX + 150;
      await storage.atomic(async (tx) => {
        for (let i = 0; i < n; i++) {
          await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: `/t/${i}`, content: `t${i}`, expiresAt: '2026-03-01T06:00:00.000Z' });
        }
        // Live, and bound for the paths of expired ones: whichever 100 a write purges first, some of these meet one.
        for (let i = 0; i < n; i += 10) await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: `/m/${i}`, content: `m${i}` });
      });
      const later = '2026-03-02T00:00:00.000Z';
      expect(await storage.moveTree({ storeId: s.id, from: '/m', to: '/t', actor: { type: 'api_actor', apiKeyId: 'k' }, now: later, versionIds: () => newId('version') })).toBe(n / 10);
      expect((await storage.getMemoryByPath(s.id, '/t/240'))?.content).toBe('m240');
      expect(await storage.purgeExpiredMemories(later, 1000)).toBe(0);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a TTL set, renewed or cleared by an update appends no version when nothing else changes', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'one');
      const later = '2999-01-01T00:00:00.000Z';
      expect(await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, expiresAt: later })).toMatchObject({ changed: false, memory: { expiresAt: later } });
      expect((await storage.getMemory(s.id, m.id))?.expiresAt).toBe(later);
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, expiresAt: null });
      expect((await storage.getMemory(s.id, m.id))?.expiresAt).toBeNull();
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });
  });

  describe('versions', () => {
    it('versions list newest first and filter by memory, operation and actor', async () => {
      const { storage, stamp, addStore, addMemory, actor } = await fixture(makeStorage);
      const s = await addStore();
      const agent: Actor = { type: 'session_actor', sessionId: newId('session') };
      const a = await addMemory(s.id, '/a');
      const b = await addMemory(s.id, '/b', 'b', agent);
      await storage.updateMemory({ ...stamp(agent), storeId: s.id, memoryId: a.id, content: 'a2' });
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: b.id });
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
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a', 'text');
      const [v] = (await storage.listVersions(s.id, verQ({ view: 'basic' }))).data;
      expect(v).toMatchObject({ path: '/a', content: null, contentSizeBytes: 4 });
    });

    it('redaction nulls the body, records who and when, and leaves the memory alone', async () => {
      const { storage, stamp, addStore, addMemory, actor } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'secret');
      const now = (await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'clean' })).memory;
      const at = '2026-04-01T00:00:00.000Z';
      const red = await storage.redactVersion(s.id, m.versionId, actor, at);
      expect(red).toMatchObject({ id: m.versionId, operation: 'created', memoryId: m.id, path: null, content: null, contentSha256: null, contentSizeBytes: null, redactedAt: at, redactedBy: actor });
      expect(red.erased).toEqual({ sha256: m.contentSha256, gone: true });
      expect(await storage.getVersion(s.id, m.versionId)).toEqual({ ...red, erased: undefined });
      expect(await storage.getMemory(s.id, m.id)).toEqual(now);
      expect(await storage.integrityCheck()).toEqual([]);
    });

    it('redaction of the head version of a live memory is a conflict; an unknown version is not_found', async () => {
      const { storage, addStore, addMemory, actor, now } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      expect(await codeOf(() => storage.redactVersion(s.id, m.versionId, actor, now()))).toBe('conflict');
      expect(await codeOf(() => storage.redactVersion(s.id, newId('version'), actor, now()))).toBe('not_found');
      expect((await storage.getVersion(s.id, m.versionId))?.content).toBe(m.content);
    });

    it('versions page newest first with no duplicates or gaps', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'v0');
      for (let i = 1; i < 12; i++) await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: `v${i}` });
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
      const { storage, addStore } = await fixture(makeStorage);
      const s = await addStore();
      expect(await rejectionCode(() => storage.listVersions(s.id, verQ({ page: 'nonsense' })))).toBe('invalid_request');
      expect(await rejectionCode(() => storage.listMemories(s.id, memQ({ page: 'page_' + Buffer.from('[1]').toString('base64url') })))).toBe('invalid_request');
      expect(await rejectionCode(() => storage.listStores(s.workspaceId, storeQ({ page: 'page_' + Buffer.from('{"s":"x"}').toString('base64url') })))).toBe('invalid_request');
    });

    it('redacting twice keeps the first redaction', async () => {
      const { storage, stamp, addStore, addMemory, actor } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'secret');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'clean' });
      const { erased, ...first } = await storage.redactVersion(s.id, m.versionId, actor, '2026-04-01T00:00:00.000Z');
      expect(erased).toEqual({ sha256: m.contentSha256, gone: true });
      // Only the redaction that erased it names the text (whose other holders the service then counts).
      expect(await storage.redactVersion(s.id, m.versionId, { type: 'api_actor', apiKeyId: 'other' }, '2026-05-01T00:00:00.000Z')).toEqual(first);
    });

    it('the holders of a text are its unredacted versions in the store\'s workspace, newest first, capped, in the stores named, each saying whether it is a live head', async () => {
      const { storage, stamp, addStore, addMemory, now } = await fixture(makeStorage);
      const s = await addStore();
      const t = await addStore('other');
      const w2 = { id: newId('workspace'), name: 'w2', createdAt: now() };
      await storage.insertWorkspace(w2, false);
      const elsewhere = await addStore('elsewhere', w2.id);
      const old = await addMemory(s.id, '/old', 'same');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: old.id, content: 'changed' });
      const head = await addMemory(t.id, '/head', 'same');
      const expired = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/expired', content: 'same', expiresAt: now() });
      await addMemory(elsewhere.id, '/theirs', 'same');
      await addMemory(s.id, '/unrelated', 'different');
      const all = { limit: 10, only: null, now: now() };
      const held = await storage.listTextHolders(s.id, old.contentSha256, all);
      expect(held).toEqual({
        data: [
          { id: expired.versionId, storeId: s.id, memoryId: expired.id, path: '/expired', createdAt: expired.createdAt, current: false },
          { id: head.versionId, storeId: t.id, memoryId: head.id, path: '/head', createdAt: head.createdAt, current: true },
          { id: old.versionId, storeId: s.id, memoryId: old.id, path: '/old', createdAt: old.createdAt, current: false },
        ],
        hasMore: false,
        count: 3,
      });
      expect(await storage.listTextHolders(s.id, old.contentSha256, { ...all, limit: 2 })).toEqual({ data: held.data.slice(0, 2), hasMore: true, count: 3 });
      // The count covers the workspace, whichever stores are listed.
      expect(await storage.listTextHolders(s.id, old.contentSha256, { ...all, only: [t.id] })).toMatchObject({ data: [held.data[1]], count: 3 });
      expect(await storage.listTextHolders(s.id, old.contentSha256, { ...all, only: [] })).toEqual({ data: [], hasMore: false, count: 3 });
      // Another workspace's version keeps the bytes stored, though no holder here counts it.
      expect((await storage.redactVersion(s.id, old.versionId, stamp().actor, now())).erased).toEqual({ sha256: old.contentSha256, gone: false });
      expect(await storage.listTextHolders(t.id, old.contentSha256, all)).toMatchObject({ data: [{ id: expired.versionId }, { id: head.versionId }], count: 2 });
    });

    it('a redaction counts the holders its list names: a fork still being built holds the text unseen, and counts once published', async () => {
      const { storage, workspace, stamp, addStore, addMemory, actor, now } = await fixture(makeStorage);
      const s = await addStore();
      const old = await addMemory(s.id, '/old', 'shared');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: old.id, content: 'changed' });
      const twin = await addMemory(s.id, '/twin', 'shared');
      // The fork copies both heads ('changed' and the twin's 'shared'), not the version redacted below.
      const asOf = now();
      const fork: Store = {
        id: newId('store'), workspaceId: workspace.id, name: 'fork', description: '', metadata: {},
        createdAt: asOf, updatedAt: asOf, archivedAt: null, forkedFrom: { storeId: s.id, asOf },
      };
      await storage.beginFork(fork);
      const batch = { sourceId: s.id, targetId: fork.id, asOf, limit: 10, actor, now: asOf, newMemoryId: () => newId('memory'), newVersionId: () => newId('version') };
      for (let after = await storage.copyForkBatch({ ...batch, after: null }); after !== null; after = await storage.copyForkBatch({ ...batch, after }));
      const red = await storage.redactVersion(s.id, old.versionId, actor, now());
      const all = { limit: 10, only: null, now: now() };
      expect(red.erased).toEqual({ sha256: old.contentSha256, gone: false });
      const held = await storage.listTextHolders(s.id, old.contentSha256, all);
      expect(held.data.map((h) => h.id)).toEqual([twin.versionId]);
      expect(held.count).toBe(1);
      await storage.publishFork(fork.id);
      const published = await storage.listTextHolders(s.id, old.contentSha256, all);
      expect(published.data.map((h) => h.storeId)).toEqual([fork.id, s.id]);
      expect(published.count).toBe(2);
    });

    it('once its memory is deleted, what was its head version can be redacted', async () => {
      const { storage, stamp, addStore, addMemory, actor, now } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'secret');
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id });
      expect(await storage.redactVersion(s.id, m.versionId, actor, now())).toMatchObject({ content: null, path: null });
      expect(await storage.integrityCheck()).toEqual([]);
    });

    it('a version is redacted only inside its own store', async () => {
      const { storage, stamp, addStore, addMemory, actor, now } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      const m = await addMemory(s.id, '/a', 'secret');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'clean' });
      expect(await codeOf(() => storage.redactVersion(other.id, m.versionId, actor, now()))).toBe('not_found');
      expect((await storage.getVersion(s.id, m.versionId))?.content).toBe('secret');
    });
  });
}

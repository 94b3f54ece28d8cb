/**
 * Write-behind of a mount's writes in the SQLite adapter (sqlite/write-behind.ts, DESIGN §5): a
 * journaled write is answered inside a held batch that commits later, and is kept in the journal
 * meanwhile. These tests drive the port as the service does, with a hold long enough that only what
 * the test does commits the batch, and look at the file from a second connection (what any other
 * process sees). A crash is simulated by copying the files as they stand while a batch is held.
 */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { JournaledWrite, Storage } from '../../src/storage/port.js';
import { journalFileOf, openJournal, readJournal } from '../../src/storage/sqlite/journal.js';
import { openSqliteStorage, type SqliteStorage } from '../../src/storage/sqlite/open.js';
import { createService } from '../../src/service/service.js';
import { tmpDir } from '../helpers/tmp.js';

const ROOT = typeof process.getuid === 'function' && process.getuid() === 0;

const HOLD_FOREVER = 3_600_000;
const NORMAL = 1;
const FULL = 2;

interface Opened {
  storage: SqliteStorage;
  file: string;
  storeId: string;
  workspaceId: string;
  logs: string[];
}

function open(file: string, logs: string[] = []): SqliteStorage {
  const storage = openSqliteStorage(file, { writeBehind: { log: (l) => logs.push(l), holdMs: HOLD_FOREVER } });
  onTestFinished(() => storage.close());
  return storage;
}

async function openWithStore(dir = tmpDir()): Promise<Opened> {
  const file = join(dir, 'mnemo.db');
  const logs: string[] = [];
  const storage = open(file, logs);
  const service = createService({ storage });
  const ws = await service.keys.defaultWorkspace();
  const { key } = await service.keys.createKey('t', 'admin', ws.id);
  const store = await service.createStore({ workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } }, { name: 's', description: '', metadata: {} });
  return { storage, file, storeId: store.id, workspaceId: ws.id, logs };
}

/** A save as a journal keeps it: without an admission (port/memories.ts `JournaledWrite`). */
type SaveInput = Extract<JournaledWrite, { method: 'saveMemoryAt' }>['input'];

let n = 0;
function saveInput(storeId: string, path: string, content: string): SaveInput {
  n += 1;
  return { storeId, path, content, memoryId: `mem_wb${n}`, versionId: `memver_wb${n}`, actor: { type: 'session_actor', sessionId: 'sesn_wb' }, now: new Date().toISOString() };
}

/** A mount's save as the service makes it: durable later, given as data too. */
function heldSave(storage: Storage, input: SaveInput) {
  const journal: JournaledWrite = { method: 'saveMemoryAt', input };
  return storage.atomic((tx) => tx.saveMemoryAt(input), { durable: false, journal });
}

/** Paths of the store's live memories as another connection (another process) sees the file. */
function committedPaths(file: string, storeId: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT path FROM memories WHERE store_id = ? ORDER BY path').pluck().all(storeId) as string[]);
  } finally {
    db.close();
  }
}

describe('write-behind of mount writes (SQLite)', () => {
  it('answers a journaled save before its commit: this connection reads it, another does not until the batch commits', async () => {
    const { storage, file, storeId } = await openWithStore();
    await heldSave(storage, saveInput(storeId, '/a.md', 'a'));
    await heldSave(storage, saveInput(storeId, '/b.md', 'b'));

    expect((await storage.getMemoryByPath(storeId, '/a.md'))?.content).toBe('a');
    expect(committedPaths(file, storeId)).toEqual([]);
    expect(readJournal(journalFileOf(file)).map((r) => r.write.input)).toMatchObject([{ path: '/a.md' }, { path: '/b.md' }]);
    // The batch is still to be synced: the background sync must come back for it.
    expect(storage.unsyncedCommits()).toBeGreaterThan(0);
    expect(storage.readPragma('synchronous')).toBe(NORMAL);

    // A WAL sync (fsync(2) on a mounted file) commits the batch first.
    await storage.syncCommits();
    expect(committedPaths(file, storeId)).toEqual(['/a.md', '/b.md']);
    expect(statSync(journalFileOf(file)).size).toBe(0);
    expect(storage.unsyncedCommits()).toBe(0);
    expect(storage.readPragma('synchronous')).toBe(FULL);
  });

  it('commits the held batch before any other write, which then commits durably on its own', async () => {
    const { storage, file, storeId } = await openWithStore();
    await heldSave(storage, saveInput(storeId, '/held.md', 'h'));
    // An API write: its own durable transaction, after the batch's commit.
    await storage.atomic((tx) => tx.saveMemoryAt(saveInput(storeId, '/api.md', 'x')));
    expect(committedPaths(file, storeId)).toEqual(['/api.md', '/held.md']);
    expect(storage.readPragma('synchronous')).toBe(FULL);
    // A write outside any transaction helper of the port commits it too.
    await heldSave(storage, saveInput(storeId, '/held2.md', 'h'));
    await storage.updateStore((await storage.getStoreById(storeId))!.workspaceId, storeId, { name: 'renamed' }, new Date().toISOString());
    expect(committedPaths(file, storeId)).toContain('/held2.md');
  });

  it('counts a held batch once in the commit metric, when it commits, however many saves it holds', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const commits: number[] = [];
    const storage = openSqliteStorage(file, { writeBehind: { log: () => {}, holdMs: HOLD_FOREVER }, onCommit: (s) => commits.push(s) });
    onTestFinished(() => storage.close());
    const service = createService({ storage });
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey('t', 'admin', ws.id);
    const storeId = (await service.createStore({ workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } }, { name: 's', description: '', metadata: {} })).id;
    const before = commits.length;
    for (const p of ['/a.md', '/b.md', '/c.md']) await heldSave(storage, saveInput(storeId, p, p));
    expect(commits.length).toBe(before);
    await storage.syncCommits();
    expect(commits.length).toBe(before + 1);
    expect(commits.at(-1)).toBeGreaterThan(0);
  });

  it('commits the held batch before a read on a reader thread, which sees every answered save', async () => {
    const { storage, storeId } = await openWithStore();
    expect(storage.readerThreads).toBeGreaterThan(0);
    await heldSave(storage, saveInput(storeId, '/seen.md', 'needle'));
    const page = await storage.listMemories(storeId, { pathPrefix: '/', depth: 0, limit: 10, page: null, view: 'basic' });
    expect(page.data.map((i) => (i.type === 'memory' ? i.memory.path : i.path))).toEqual(['/seen.md']);
  });

  it('a refused save rolls back alone, and the batch keeps the saves around it', async () => {
    const { storage, file, storeId } = await openWithStore();
    await heldSave(storage, saveInput(storeId, '/dir/a.md', 'a'));
    // /dir is a directory of /dir/a.md: a memory there would overlap it.
    await expect(heldSave(storage, saveInput(storeId, '/dir', 'x'))).rejects.toMatchObject({ code: 'path_conflict' });
    await heldSave(storage, saveInput(storeId, '/b.md', 'b'));
    expect(readJournal(journalFileOf(file))).toHaveLength(2);
    await storage.syncCommits();
    expect(committedPaths(file, storeId)).toEqual(['/b.md', '/dir/a.md']);
  });

  it('replays at the next open a batch that a crash left uncommitted, in order, once', async () => {
    const dir = tmpDir();
    const { storage, file, storeId } = await openWithStore(dir);
    await storage.syncCommits();
    // The database as it stood before the batch, and the journal as a crash would leave it.
    const crashed = join(tmpDir(), 'mnemo.db');
    await storage.close();
    copyFileSync(file, crashed);
    const again = open(file);
    await heldSave(again, saveInput(storeId, '/a.md', 'one'));
    await heldSave(again, saveInput(storeId, '/a.md', 'two'));
    await heldSave(again, saveInput(storeId, '/b.md', 'b'));
    copyFileSync(journalFileOf(file), journalFileOf(crashed));

    const logs: string[] = [];
    const restarted = open(crashed, logs);
    expect((await restarted.getMemoryByPath(storeId, '/a.md'))?.content).toBe('two');
    expect((await restarted.getMemoryByPath(storeId, '/b.md'))?.content).toBe('b');
    expect(committedPaths(crashed, storeId)).toEqual(['/a.md', '/b.md']);
    const versions = await restarted.listVersions(storeId, {
      memoryId: null, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null, createdGte: null, createdLte: null, limit: 10, page: null, view: 'basic',
    });
    expect(versions.data.map((v) => `${v.operation} ${v.path}`).reverse()).toEqual(['created /a.md', 'modified /a.md', 'created /b.md']);
    expect(logs.join('\n')).toMatch(/replayed 3 mount write/);
    expect(statSync(journalFileOf(crashed)).size).toBe(0);
  });

  // Item 9: another process (mnemo mount, mcp) wrote the path after the crash, before the replay.
  it('does not replay a write over a memory another process changed after it, and logs which version stays', async () => {
    const { storage, file, storeId } = await openWithStore();
    await storage.syncCommits();
    const crashed = join(tmpDir(), 'mnemo.db');
    await storage.close();
    copyFileSync(file, crashed);
    const again = open(file);
    await heldSave(again, saveInput(storeId, '/plan.md', 'old text'));
    await heldSave(again, saveInput(storeId, '/other.md', 'kept'));
    copyFileSync(journalFileOf(file), journalFileOf(crashed));

    // A later save by a process without the journal (a plain connection, as mnemo mount opens one).
    await new Promise((r) => setTimeout(r, 5));
    const beside = openSqliteStorage(crashed);
    const later = saveInput(storeId, '/plan.md', 'new text');
    await beside.saveMemoryAt(later);
    await beside.close();

    const logs: string[] = [];
    const restarted = open(crashed, logs);
    expect((await restarted.getMemoryByPath(storeId, '/plan.md'))?.content).toBe('new text');
    expect((await restarted.getMemoryByPath(storeId, '/other.md'))?.content).toBe('kept');
    expect(logs.join('\n')).toContain(`mnemo: warn: a journaled mount write of `);
    expect(logs.join('\n')).toContain(`saveMemoryAt in ${storeId} /plan.md: version ${later.versionId} of ${later.now} changed it later, and stays`);
    expect(logs.join('\n')).toMatch(/replayed 1 mount write/);
  });

  it('does not apply again a batch that committed before the crash emptied the journal', async () => {
    const { storage, file, storeId } = await openWithStore();
    await heldSave(storage, saveInput(storeId, '/a.md', 'one'));
    await heldSave(storage, saveInput(storeId, '/a.md', 'one'));
    const journal = readFileSync(journalFileOf(file));
    await storage.syncCommits();
    await heldSave(storage, saveInput(storeId, '/a.md', 'two'));
    await storage.close();
    // A crash between the COMMIT and the journal's reset: the committed batch is still there.
    writeFileSync(journalFileOf(file), journal);
    const logs: string[] = [];
    const restarted = open(file, logs);
    expect((await restarted.getMemoryByPath(storeId, '/a.md'))?.content).toBe('two');
    expect(logs.join('\n')).not.toMatch(/replayed/);
  });

  it("keeps a service's save and move without their admission (a replay is of a write already admitted), and replays them", async () => {
    const dir = tmpDir();
    const { storage, file, storeId, workspaceId } = await openWithStore(dir);
    await storage.syncCommits();
    const crashed = join(tmpDir(), 'mnemo.db');
    await storage.close();
    copyFileSync(file, crashed);
    const again = open(file);
    // As a mount writes: the service hands the adapter the write with its admission, the journal the write alone.
    const service = createService({ storage: again });
    const mount = { workspaceId, actor: { type: 'session_actor' as const, sessionId: 'sesn_wb' } };
    const saved = await service.saveMemoryAt(mount, storeId, { path: '/a.md', content: 'one', memoryId: service.ids('memory') });
    await service.moveMemory(mount, storeId, saved.memory.id, '/b.md');
    const held = readJournal(journalFileOf(file));
    expect(held.map((r) => r.write.method)).toEqual(['saveMemoryAt', 'moveMemory']);
    for (const r of held) expect(r.write.input).not.toHaveProperty('admission');
    copyFileSync(journalFileOf(file), journalFileOf(crashed));

    const logs: string[] = [];
    const restarted = open(crashed, logs);
    expect(logs.join('\n')).toMatch(/replayed 2 mount write/);
    expect(await restarted.getMemoryByPath(storeId, '/b.md')).toMatchObject({ id: saved.memory.id, content: 'one' });
  });

  it('stops reading the journal at a record cut short or damaged', () => {
    const file = join(tmpDir(), 'journal');
    const j = openJournal(file);
    const write = (i: number): JournaledWrite => ({ method: 'deleteMemory', input: { storeId: 's', memoryId: `m${i}`, versionId: `v${i}`, now: 't', actor: { type: 'session_actor', sessionId: 'x' } } });
    for (let i = 0; i < 3; i++) j.append({ batch: 1, write: write(i) });
    j.close();
    const whole = readFileSync(file);
    expect(readJournal(file)).toHaveLength(3);
    writeFileSync(file, whole.subarray(0, whole.length - 5));
    expect(readJournal(file)).toHaveLength(2);
    const damaged = Buffer.from(whole);
    damaged[whole.length - 10] = damaged[whole.length - 10]! ^ 0xff;
    writeFileSync(file, damaged);
    expect(readJournal(file)).toHaveLength(2);
    expect(readJournal(join(tmpDir(), 'none'))).toEqual([]);
    expect(existsSync(file)).toBe(true);
  });

  // A full disk, for real: the data directory on a small tmpfs (mounting one needs root, as CI has).
  it.skipIf(!ROOT)('a batch whose COMMIT finds the disk full applies each write again alone: what fits is stored whole, the rest is logged as lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]);
    const logs: string[] = [];
    const file = join(dir, 'mnemo.db');
    const storage = openSqliteStorage(file, { writeBehind: { log: (l) => logs.push(l), holdMs: HOLD_FOREVER } });
    onTestFinished(() => {
      storage.close();
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    });
    const service = createService({ storage });
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey('t', 'admin', ws.id);
    const storeId = (await service.createStore({ workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } }, { name: 's', description: '', metadata: {} })).id;
    // Room for the three writes' journal records (100 KiB each) and then for about one of them in
    // the WAL, not for the batch's three: its COMMIT fails with SQLITE_FULL.
    const free = () => statfsSync(dir).bavail * statfsSync(dir).bsize;
    const filler = join(dir, 'filler');
    writeFileSync(filler, Buffer.alloc(free() - 560 * 1024));
    const writes = ['/a.md', '/b.md', '/c.md'].map((p, i) => saveInput(storeId, p, String(i).repeat(100 * 1024)));
    for (const w of writes) await heldSave(storage, w);
    await storage.syncCommits().catch(() => {});

    expect(logs[0]).toMatch(/^mnemo: error: a batch of 3 mount write\(s\) failed to commit \(database or disk is full\); applying each again$/);
    const lost = writes.filter((w) => logs.some((l) => l.startsWith('mnemo: error: lost a closed mount write') && l.includes(` ${w.path}: `)));
    const kept = writes.filter((w) => !lost.includes(w));
    // Applied again alone, the first fits and the last does not (the WAL holds each after the one before).
    expect(kept.map((w) => w.path)).toContain('/a.md');
    expect(lost.map((w) => w.path)).toContain('/c.md');
    expect(logs).toHaveLength(1 + lost.length);
    // What was kept is whole and committed (another connection reads it); what was lost left nothing.
    expect(committedPaths(file, storeId)).toEqual(kept.map((w) => w.path));
    for (const w of kept) expect((await storage.getMemoryByPath(storeId, w.path))?.content).toBe(w.content);
    // With room again, the store takes saves and is consistent.
    unlinkSync(filler);
    await heldSave(storage, saveInput(storeId, '/after.md', 'after'));
    await storage.syncCommits();
    expect(committedPaths(file, storeId)).toEqual([...kept.map((w) => w.path), '/after.md'].sort());
    expect(await storage.integrityCheck()).toEqual([]);
    expect(await storage.domainCheck()).toEqual([]);
  });

  it('keeps a text exactly, whatever its characters, and a write without one', () => {
    const file = join(tmpDir(), 'journal');
    const j = openJournal(file);
    const text = 'é "quoted" \\ tab\t\n\u2603 line\n';
    const save: JournaledWrite = { method: 'saveMemoryAt', input: saveInput('s', '/a.md', text) };
    const move: JournaledWrite = { method: 'moveMemory', input: { storeId: 's', memoryId: 'm', path: '/b.md', replacedVersionId: 'r', versionId: 'v', now: 't', actor: { type: 'session_actor', sessionId: 'x' } } };
    j.append({ batch: 7, write: save });
    j.append({ batch: 7, write: move });
    j.close();
    expect(readJournal(file)).toEqual([{ batch: 7, write: save }, { batch: 7, write: move }]);
  });
});

/**
 * What every role's conformance suite shares: an adapter factory, a fresh storage holding one
 * default workspace, and small builders for the port's inputs. A suite talks to the port directly,
 * without the service, and pins what each operation does on its own.
 */
import { onTestFinished } from 'vitest';
import { MnemoError, type ErrorCode } from '../../../src/domain/errors.js';
import { newId } from '../../../src/service/ids.js';
import type { Storage, WriteStamp } from '../../../src/storage/port.js';
import type { Actor, MemoryListItem, MemoryListQuery, Store, StoreListQuery, VersionListQuery } from '../../../src/domain/types.js';

/** Opens a fresh, empty adapter on a real file (or database) of its own. */
export type MakeStorage = () => Storage | Promise<Storage>;

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

/** A fresh storage holding one default workspace; it closes when the test ends. */
export async function fixture(makeStorage: MakeStorage) {
  const storage = await makeStorage();
  onTestFinished(() => storage.close());
  let tick = 0;
  const now = () => new Date(T0 + 1000 * tick++).toISOString();
  const workspace = { id: newId('workspace'), name: 'default', createdAt: now() };
  await storage.insertWorkspace(workspace, true);
  const actor: Actor = { type: 'api_actor', apiKeyId: newId('apiKey') };
  const stamp = (a: Actor = actor): WriteStamp => ({ actor: a, now: now(), versionId: newId('version') });

  async function addStore(name = 'notes', workspaceId = workspace.id): Promise<Store> {
    const at = now();
    const store: Store = { id: newId('store'), workspaceId, name, description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
    await storage.insertStore(store);
    return store;
  }

  /** `over`: the storage to write through (a transaction's `tx` inside one). */
  function addMemory(storeId: string, path: string, content = `content of ${path}`, a: Actor = actor, over: Storage = storage) {
    return over.createMemory({ ...stamp(a), storeId, memoryId: newId('memory'), path, content });
  }

  return { storage, workspace, actor, now, stamp, addStore, addMemory };
}

export const memQ = (q: Partial<MemoryListQuery> = {}): MemoryListQuery => ({ pathPrefix: '/', depth: 0, limit: 100, page: null, view: 'basic', ...q });
export const verQ = (q: Partial<VersionListQuery> = {}): VersionListQuery => ({
  memoryId: null, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null,
  createdGte: null, createdLte: null, limit: 100, page: null, view: 'full', ...q,
});
export const storeQ = (q: Partial<StoreListQuery> = {}): StoreListQuery => ({ includeArchived: false, createdGte: null, createdLte: null, limit: 100, page: null, ...q });
export const paths = (items: MemoryListItem[]) => items.map((i) => (i.type === 'memory' ? i.memory.path : `${i.path} (prefix)`));

/** The error a call throws or rejects with, or null: for asserting on a MnemoError's code and details together. */
export async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  return null;
}

/**
 * The code of the MnemoError a call throws or rejects with: for the reads that grow with the store,
 * which an adapter may answer with a promise (awaiting a plain value is harmless).
 */
export async function rejectionCode(fn: () => unknown): Promise<ErrorCode> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof MnemoError) return err.code;
    throw err;
  }
  throw new Error('expected a MnemoError, but the call succeeded');
}

/**
 * The storage side of issue 4: a receipt commits or rolls back together with its mutation, expired
 * receipts purge, keys list and revoke within their workspace, and store lists honour a grant.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/service/idempotency.js';
import { newId } from '../../src/service/ids.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import type { Receipt } from '../../src/storage/port.js';
import { codeOf, openCore } from '../helpers/core.js';
import { tmpDir } from '../helpers/tmp.js';

const scope = { workspaceId: 'wrkspc_a', apiKeyId: 'apikey_a', route: 'POST /v1/memory_stores', key: 'k' };

function receipt(expiresAt: string, key = 'k'): Receipt {
  return { ...scope, key, fingerprint: 'f', status: 200, body: '{}', storeId: null, versionId: null, createdAt: '2026-01-01T00:00:00.000Z', expiresAt };
}

describe('receipts', () => {
  it('a receipt and its mutation commit together, and a failure inside leaves neither', async () => {
    const core = await openCore();
    const idem = core.service.idempotency;
    const req = { scope: { ...scope, workspaceId: core.caller.workspaceId }, fingerprint: fingerprint({ a: 1 }) };
    await expect(idem.commit(req, async (ops) => {
        await ops.createStore(core.caller, { name: 'doomed', description: '', metadata: {} });
        throw new Error('crash between the mutation and the answer');
      })).rejects.toThrow();
    expect(await core.storage.findReceipt(req.scope)).toBeNull();
    expect((await core.service.listStores(core.caller, { includeArchived: true, createdGte: null, createdLte: null, limit: 10, page: null })).data).toEqual([]);

    const reply = await idem.commit(req, async (ops) => ({ status: 200, body: await ops.createStore(core.caller, { name: 'kept', description: '', metadata: {} }) }));
    expect(await idem.find(req)).toEqual({ ...reply, body: JSON.parse(JSON.stringify(reply.body)), storeId: null, versionId: null });
    expect(await codeOf(() => idem.find({ ...req, fingerprint: fingerprint({ a: 2 }) }))).toBe('idempotency_conflict');
  });

  it('the fingerprint ignores key order and undefined fields, but not values', () => {
    expect(fingerprint({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(fingerprint({ b: { d: 'x', c: [1, 2] }, a: 1, z: undefined }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: '1' }));
    expect(fingerprint({ a: [1, 2] })).not.toBe(fingerprint({ a: [2, 1] }));
  });

  it('purges expired receipts only, and they survive reopening the file', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const s1 = openSqliteStorage(file);
    await s1.insertReceipt(receipt('2026-01-01T00:00:01.000Z', 'old'));
    await s1.insertReceipt(receipt('2026-01-02T00:00:00.000Z', 'new'));
    await s1.close();
    const s2 = openSqliteStorage(file);
    expect(await s2.purgeReceipts('2026-01-01T12:00:00.000Z', '9999-01-01T00:00:00.000Z')).toBe(1);
    expect(await s2.findReceipt({ ...scope, key: 'old' })).toBeNull();
    expect(await s2.findReceipt({ ...scope, key: 'new' })).toMatchObject({ key: 'new', status: 200 });
    await s2.close();
  });
});

describe('keys and grants in storage', () => {
  it('keys list and revoke only inside their workspace; revoking twice keeps the first time', async () => {
    const core = await openCore();
    const ws = core.caller.workspaceId;
    const other = await core.service.keys.createWorkspace('other');
    const { key } = await core.service.keys.createKey('scoped', 'read_only', ws, { storeIds: ['memstore_a'] });
    expect((await core.storage.listApiKeys(ws)).map((k) => k.id)).toContain(key.id);
    expect(await core.storage.listApiKeys(other.id)).toEqual([]);
    expect(await core.storage.getApiKey(ws, key.id)).toMatchObject({ storeIds: ['memstore_a'], allWorkspaces: false });
    expect(await codeOf(() => core.storage.revokeApiKey(other.id, key.id, '2026-01-01T00:00:00.000Z'))).toBe('not_found');
    const first = await core.storage.revokeApiKey(ws, key.id, '2026-01-01T00:00:00.000Z');
    expect((await core.storage.revokeApiKey(ws, key.id, '2026-02-01T00:00:00.000Z')).revokedAt).toBe(first.revokedAt);
    expect(await codeOf(() => core.service.keys.createKey('x', 'read_write', newId('workspace')))).toBe('not_found');
    expect(await codeOf(() => core.service.keys.createKey('x', 'read_write', ws, { allWorkspaces: true }))).toBe('invalid_request');
  });

  it('a store list with a grant shows only the granted stores', async () => {
    const core = await openCore();
    const a = await core.service.createStore(core.caller, { name: 'a', description: '', metadata: {} });
    await core.service.createStore(core.caller, { name: 'b', description: '', metadata: {} });
    const q = { includeArchived: false, createdGte: null, createdLte: null, limit: 10, page: null };
    const scoped = { ...core.caller, grant: { role: 'read_only' as const, storeIds: [a.id] } };
    expect((await core.service.listStores(scoped, q)).data.map((s) => s.id)).toEqual([a.id]);
    expect((await core.service.listStores(core.caller, q)).data).toHaveLength(2);
  });
});

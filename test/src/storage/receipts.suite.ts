/** The receipts role's conformance suite: the first answer to an idempotent request, kept for its retries. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import type { Receipt, ReceiptScope } from '../../../src/storage/port.js';
import { fixture, type MakeStorage } from './fixture.js';

/** A `latest` no receipt here expires after: the purge shortens none. */
const FAR = '9999-01-01T00:00:00.000Z';

export function runReceiptSuite(makeStorage: MakeStorage): void {
  describe('receipts', () => {
    function receiptOf(scope: ReceiptScope, expiresAt = '2999-01-01T00:00:00.000Z', extra: Partial<Receipt> = {}): Receipt {
      return {
        ...scope, fingerprint: 'f'.repeat(64), status: 201, body: '{"id":"x"}', storeId: null, versionId: null,
        createdAt: '2026-03-01T00:00:00.000Z', expiresAt, ...extra,
      };
    }

    it('a receipt reads back by its whole scope, and by no scope that differs in any part', async () => {
      const { storage, workspace } = await fixture(makeStorage);
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores', key: 'k1' };
      const r = receiptOf(scope);
      await storage.insertReceipt(r);
      expect(await storage.findReceipt(scope)).toEqual(r);
      for (const part of ['workspaceId', 'apiKeyId', 'route', 'key'] as const) {
        expect(await storage.findReceipt({ ...scope, [part]: `${scope[part]}-other` })).toBeNull();
      }
    });

    it('deleting a receipt removes that one only', async () => {
      const { storage, workspace } = await fixture(makeStorage);
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores', key: 'k1' };
      await storage.insertReceipt(receiptOf(scope));
      await storage.insertReceipt(receiptOf({ ...scope, key: 'k2' }));
      await storage.deleteReceipt(scope);
      expect(await storage.findReceipt(scope)).toBeNull();
      expect(await storage.findReceipt({ ...scope, key: 'k2' })).not.toBeNull();
    });

    it('purging deletes the receipts expired at or before the time given and says how many', async () => {
      const { storage, workspace } = await fixture(makeStorage);
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores', key: 'k' };
      await storage.insertReceipt(receiptOf({ ...scope, key: 'a' }, '2026-03-01T00:00:00.000Z'));
      await storage.insertReceipt(receiptOf({ ...scope, key: 'b' }, '2026-03-02T00:00:00.000Z'));
      await storage.insertReceipt(receiptOf({ ...scope, key: 'c' }, '2026-03-03T00:00:00.000Z'));
      expect(await storage.purgeReceipts('2026-03-02T00:00:00.000Z', FAR)).toBe(2);
      expect(await storage.findReceipt({ ...scope, key: 'b' })).toBeNull();
      expect(await storage.findReceipt({ ...scope, key: 'c' })).not.toBeNull();
      expect(await storage.purgeReceipts('2026-03-02T00:00:00.000Z', FAR)).toBe(0);
    });

    it('purging makes receipts set to expire after the latest time given expire then', async () => {
      const { storage, workspace } = await fixture(makeStorage);
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores', key: 'k' };
      await storage.insertReceipt(receiptOf({ ...scope, key: 'a' }, '2026-03-02T00:00:00.000Z'));
      await storage.insertReceipt(receiptOf({ ...scope, key: 'b' }, '2026-03-09T00:00:00.000Z'));
      expect(await storage.purgeReceipts('2026-03-01T00:00:00.000Z', '2026-03-03T00:00:00.000Z')).toBe(0);
      expect(await storage.findReceipt({ ...scope, key: 'a' })).toMatchObject({ expiresAt: '2026-03-02T00:00:00.000Z' });
      expect(await storage.findReceipt({ ...scope, key: 'b' })).toMatchObject({ expiresAt: '2026-03-03T00:00:00.000Z' });
      expect(await storage.purgeReceipts('2026-03-03T00:00:00.000Z', FAR)).toBe(2);
    });

    it("a receipt naming a deleted store is found no more from the delete on, and the store's purge removes it", async () => {
      const { storage, workspace, addStore } = await fixture(makeStorage);
      const doomed = await addStore();
      const kept = await addStore();
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores/{id}/memories', key: 'doomed' };
      const keptScope = { ...scope, key: 'kept' };
      const storeless = { ...scope, route: 'DELETE /v1/memory_stores/{id}', key: 'storeless' };
      await storage.insertReceipt(receiptOf(scope, undefined, { storeId: doomed.id }));
      await storage.insertReceipt(receiptOf(keptScope, undefined, { storeId: kept.id }));
      await storage.insertReceipt(receiptOf(storeless));
      await storage.deleteStore(workspace.id, doomed.id);
      expect(await storage.findReceipt(scope)).toBeNull();
      expect(await storage.findReceipt(keptScope)).toMatchObject({ storeId: kept.id });
      expect(await storage.findReceipt(storeless)).not.toBeNull();
      while (await storage.purgeDeletedStores());
      // What is left, counted by a purge of everything: the two receipts of no deleted store.
      expect(await storage.purgeReceipts('3000-01-01T00:00:00.000Z', FAR)).toBe(2);
    });

    it('a receipt written with its mutation in one atomic call goes when the mutation fails', async () => {
      const { storage, workspace, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a');
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores/{id}/memories', key: 'k' };
      await expect(storage.atomic(async (tx) => {
        await tx.insertReceipt(receiptOf(scope));
        await addMemory(s.id, '/a', 'again', actor, tx);
      })).rejects.toThrow();
      expect(await storage.findReceipt(scope)).toBeNull();
    });

    it('redacting a version rewrites the receipts that replay it, so they hold none of its text', async () => {
      const { storage, workspace, stamp, actor, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/secret.md', 'the secret');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'clean' });
      const scope: ReceiptScope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores/{id}/memories', key: 'k' };
      const body = JSON.stringify({ id: m.id, path: m.path, content: m.content, content_sha256: m.contentSha256, content_size_bytes: m.contentSizeBytes, version_id: m.versionId });
      await storage.insertReceipt(receiptOf(scope, undefined, { body, storeId: s.id, versionId: m.versionId }));
      await storage.redactVersion(s.id, m.versionId, actor, now());
      const kept = (await storage.findReceipt(scope))!;
      expect(JSON.parse(kept.body)).toEqual({ id: m.id, path: null, content: null, content_sha256: null, content_size_bytes: null, version_id: m.versionId });
      expect(await storage.domainCheck()).toEqual([]);
    });
  });
}

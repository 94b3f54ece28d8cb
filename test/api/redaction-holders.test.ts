/**
 * A redaction's answer names the versions that still hold the text it erased
 * (`content_still_held_in`, beside the count `content_still_held_by`), through the real server:
 * newest first, at most 100 with `has_more`, in the redacted store's workspace only, read after
 * the commit and never kept in the idempotency receipt. (README, "Redaction")
 */
import { randomUUID } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { createWorkspace, jsonRequest, mintKey, sdkClient, useServer } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';

interface Holder {
  id: string;
  memory_store_id: string;
  memory_id: string;
  path: string | null;
  created_at: string;
  current: boolean;
}
interface Redacted {
  id: string;
  content_still_held_by?: number;
  content_still_held_in?: { data: Holder[]; has_more: boolean };
}

let server: RunningServer;
let client: Anthropic;

useServer((s, c) => {
  server = s;
  client = c;
});

const ms = () => client.beta.memoryStores;

/** A memory whose first version holds `text` and is no longer its head: that version may be redacted. */
async function oldVersionHolding(storeId: string, path: string, text: string): Promise<{ memoryId: string; versionId: string }> {
  const m = await ms().memories.create(storeId, { path, content: text });
  await ms().memories.update(m.id, { memory_store_id: storeId, content: `${text} (rotated)` });
  return { memoryId: m.id, versionId: m.memory_version_id };
}

const redact = async (storeId: string, versionId: string, apiKey = server.adminKey, headers: Record<string, string> = {}) => {
  const res = await jsonRequest(server, 'POST', `/v1/memory_stores/${storeId}/memory_versions/${versionId}/redact`, apiKey, undefined, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { body: res.body as Redacted, replayed: res.headers.get('idempotent-replayed') === 'true' };
};

describe('content_still_held_in', () => {
  it('lists every other version holding the erased text, newest first, with store, memory, path, time and whether it is a current version', async () => {
    const text = `token=${randomUUID()}`;
    const a = (await ms().create({ name: 'holders a' })).id;
    const b = (await ms().create({ name: 'holders b' })).id;
    const redacted = await oldVersionHolding(a, '/leak.md', text);
    const old = await oldVersionHolding(a, '/old-copy.md', text);
    const live = await ms().memories.create(a, { path: '/live-copy.md', content: text });
    const other = await ms().memories.create(b, { path: '/elsewhere.md', content: text });
    // The same text in another workspace is neither counted nor listed.
    const ws2 = await createWorkspace(server, `holders ${randomUUID()}`);
    const foreignKey = (await mintKey(server, 'admin', { headers: { 'anthropic-workspace-id': ws2.id } })).secret;
    const foreign = await sdkClient(server.url, foreignKey).beta.memoryStores.create({ name: 'foreign' });
    await sdkClient(server.url, foreignKey).beta.memoryStores.memories.create(foreign.id, { path: '/theirs.md', content: text });

    const { body } = await redact(a, redacted.versionId);
    expect(body.content_still_held_by).toBe(3);
    const created = async (storeId: string, id: string) => (await ms().memoryVersions.retrieve(id, { memory_store_id: storeId })).created_at;
    expect(body.content_still_held_in).toEqual({
      data: [
        { id: other.memory_version_id, memory_store_id: b, memory_id: other.id, path: '/elsewhere.md', created_at: await created(b, other.memory_version_id), current: true },
        { id: live.memory_version_id, memory_store_id: a, memory_id: live.id, path: '/live-copy.md', created_at: await created(a, live.memory_version_id), current: true },
        { id: old.versionId, memory_store_id: a, memory_id: old.memoryId, path: '/old-copy.md', created_at: await created(a, old.versionId), current: false },
      ],
      has_more: false,
    });

    // Redacting the listed version that may be redacted leaves the two current ones.
    const next = (await redact(a, old.versionId)).body;
    expect(next.content_still_held_by).toBe(2);
    expect(next.content_still_held_in!.data.map((h) => h.id)).toEqual([other.memory_version_id, live.memory_version_id]);
    // Once the memories change or go, their versions may be redacted too (a deleted version holds no text).
    await ms().memories.update(live.id, { memory_store_id: a, content: 'clean' });
    await ms().memories.delete(other.id, { memory_store_id: b });
    const third = (await redact(a, live.memory_version_id)).body;
    expect(third.content_still_held_in!.data.map((h) => [h.id, h.current])).toEqual([[other.memory_version_id, false]]);
    const last = (await redact(b, other.memory_version_id)).body;
    expect(last.content_still_held_by).toBe(0);
    expect(last.content_still_held_in).toEqual({ data: [], has_more: false });
  });

  it('a repeated redaction, and a replay of the same Idempotency-Key, answer without the count or the list: neither is kept in the receipt', async () => {
    const text = `replayed=${randomUUID()}`;
    const s = (await ms().create({ name: 'holders replay' })).id;
    const v = await oldVersionHolding(s, '/a.md', text);
    const copy = await ms().memories.create(s, { path: '/secret-path-of-the-copy.md', content: text });
    const key = randomUUID();
    const first = await redact(s, v.versionId, server.adminKey, { 'idempotency-key': key });
    expect(first.replayed).toBe(false);
    expect(first.body.content_still_held_in!.data.map((h) => h.id)).toEqual([copy.memory_version_id]);
    const replay = await redact(s, v.versionId, server.adminKey, { 'idempotency-key': key });
    expect(replay.replayed).toBe(true);
    expect(first.body.content_still_held_by).toBe(1);
    expect(replay.body).toEqual({ ...first.body, content_still_held_by: undefined, content_still_held_in: undefined });
    expect(JSON.stringify(replay.body)).not.toContain('secret-path-of-the-copy');
    const again = (await redact(s, v.versionId)).body;
    expect(again.content_still_held_by).toBeUndefined();
    expect(again.content_still_held_in).toBeUndefined();
    // The SDK's own call returns the field too (an additive extension).
    const w = await oldVersionHolding(s, '/b.md', text);
    const viaSdk = (await ms().memoryVersions.redact(w.versionId, { memory_store_id: s })) as unknown as Redacted;
    expect(viaSdk.content_still_held_in!.data.map((h) => h.id)).toEqual([copy.memory_version_id]);
  });

  it('keys without admin rights cannot redact, so they are never shown which versions hold a text', async () => {
    const text = `roles=${randomUUID()}`;
    const s = (await ms().create({ name: 'holders roles' })).id;
    const v = await oldVersionHolding(s, '/a.md', text);
    await ms().memories.create(s, { path: '/copy.md', content: text });
    for (const role of ['read_write', 'read_only']) {
      const res = await jsonRequest(server, 'POST', `/v1/memory_stores/${s}/memory_versions/${v.versionId}/redact`, (await mintKey(server, role)).secret);
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain('copy.md');
    }
    expect((await redact(s, v.versionId)).body.content_still_held_in!.data.map((h) => h.path)).toEqual(['/copy.md']);
  });

  it('lists the newest 100 holders and says there are more', async () => {
    const text = `many=${randomUUID()}`;
    const s = (await ms().create({ name: 'holders many' })).id;
    const v = await oldVersionHolding(s, '/first.md', text);
    const copies: string[] = [];
    for (let i = 0; i < 101; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, 101 - i) }, (_, j) => ms().memories.create(s, { path: `/copies/${String(i + j).padStart(3, '0')}.md`, content: text })),
      );
      copies.push(...batch.map((m) => m.memory_version_id));
    }
    const newestFirst = (await ms().memoryVersions.list(s, { operation: 'created', limit: 100 })).data.map((x) => x.id).filter((id) => copies.includes(id));
    const { body } = await redact(s, v.versionId);
    expect(body.content_still_held_by).toBe(101);
    expect(body.content_still_held_in!.has_more).toBe(true);
    expect(body.content_still_held_in!.data.map((h) => h.id)).toEqual(newestFirst.slice(0, 100));
  });
});

/**
 * Version diffs (issue 15) against the real server: a unified diff (the `diff` package's) of a
 * version against its predecessor by default, empty content before a memory's first version and
 * after its delete, against any version of the same store, and the refusals.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { expectRawError, rawRequest, useServer } from '../helpers/sdk.js';
import { expectVersionShape, freshStore, type Version } from './shapes.js';

let server: RunningServer;
let client: Anthropic;

useServer((s, c) => {
  server = s;
  client = c;
});

interface Diff {
  type: 'memory_version_diff';
  from: Version | null;
  to: Version;
  unified: string;
}

const memories = () => client.beta.memoryStores.memories;

async function diff(storeId: string, versionId: string, query = ''): Promise<Diff> {
  const res = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memory_versions/${versionId}/diff${query}`, { apiKey: server.adminKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Diff;
}

describe('version diffs', () => {
  it('diffs a version against the same memory\'s previous one by default, as a unified diff that applies', async () => {
    const store = await freshStore(client, 'diff');
    const m = await memories().create(store.id, { path: '/plan.md', content: 'one\ntwo\nthree\n' });
    const u = await memories().update(m.id, { memory_store_id: store.id, content: 'one\n2\nthree\nfour\n' });
    const d = await diff(store.id, u.memory_version_id);
    expect(d).toMatchObject({ type: 'memory_version_diff', from: { id: m.memory_version_id, content: null }, to: { id: u.memory_version_id, content: null } });
    expectVersionShape(d.from!);
    expectVersionShape(d.to);
    expect(d.unified).toBe(
      `--- /plan.md\t${m.memory_version_id}\n+++ /plan.md\t${u.memory_version_id}\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n`,
    );
    expect(applyPatch('one\ntwo\nthree\n', d.unified)).toBe('one\n2\nthree\nfour\n');
  });

  it('a created version diffs against empty content, a deleted one to empty content, and a rename shows both paths', async () => {
    const store = await freshStore(client, 'diff ends');
    const m = await memories().create(store.id, { path: '/a.md', content: 'hello\n' });
    const created = await diff(store.id, m.memory_version_id);
    expect(created.from).toBeNull();
    expect(created.unified).toContain('--- /dev/null');
    expect(created.unified).toContain('+hello');
    const moved = await memories().update(m.id, { memory_store_id: store.id, path: '/b.md' });
    const renamed = await diff(store.id, moved.memory_version_id);
    expect(renamed.unified).toBe(`--- /a.md\t${m.memory_version_id}\n+++ /b.md\t${moved.memory_version_id}\n`);
    await memories().delete(m.id, { memory_store_id: store.id });
    const [deleted] = (await client.beta.memoryStores.memoryVersions.list(store.id, { memory_id: m.id, operation: 'deleted' })).data;
    const gone = await diff(store.id, deleted!.id);
    expect(gone.to.operation).toBe('deleted');
    expect(gone.unified).toContain('-hello');
  });

  it('diffs against any version of the same store, another memory\'s included', async () => {
    const store = await freshStore(client, 'diff against');
    const a = await memories().create(store.id, { path: '/a.md', content: 'x\n' });
    const b = await memories().create(store.id, { path: '/b.md', content: 'y\n' });
    const d = await diff(store.id, b.memory_version_id, `?against=${a.memory_version_id}`);
    expect(d.from!.id).toBe(a.memory_version_id);
    expect(d.unified).toBe(`--- /a.md\t${a.memory_version_id}\n+++ /b.md\t${b.memory_version_id}\n@@ -1,1 +1,1 @@\n-x\n+y\n`);
  });

  it('refuses a redacted side with 409 conflict_error, an unknown version or against with 404, an empty against with 400', async () => {
    const store = await freshStore(client, 'diff refusals');
    const other = await freshStore(client, 'diff elsewhere');
    const m = await memories().create(store.id, { path: '/s.md', content: 'secret\n' });
    const u = await memories().update(m.id, { memory_store_id: store.id, content: 'fine\n' });
    const o = await memories().create(other.id, { path: '/o.md', content: 'o\n' });
    await client.beta.memoryStores.memoryVersions.redact(m.memory_version_id, { memory_store_id: store.id });
    const at = (ver: string, q = '') => rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/memory_versions/${ver}/diff${q}`, { apiKey: server.adminKey });
    expectRawError(await at(u.memory_version_id), 409, 'conflict_error');
    expectRawError(await at(m.memory_version_id), 409, 'conflict_error');
    expectRawError(await at('memver_nope'), 404, 'not_found_error');
    expectRawError(await at(u.memory_version_id, '?against=memver_nope'), 404, 'not_found_error');
    // A version of another store is not found through this one.
    expectRawError(await at(u.memory_version_id, `?against=${o.memory_version_id}`), 404, 'not_found_error');
    expectRawError(await at(u.memory_version_id, '?against='), 400, 'invalid_request_error');
  });
});

/**
 * Version diffs (issue 15) against the real server: a unified diff (the `diff` package's) of a
 * version against its predecessor by default, empty content before a memory's first version and
 * after its delete, against any version of the same store, and the refusals. Its cost is bounded:
 * versions that differ on every one of 15,000 lines (80 s of the event loop before) get a correct,
 * non-minimal diff at about the cost of an easy one, over HTTP, MCP and in the console.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { connectMcp } from '../helpers/mcp.js';
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
  minimal: boolean;
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

describe('a diff of versions that differ on every line', () => {
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('\n');
  const before = lines(15_000, (i) => String(i));
  const after = lines(15_000, (i) => `x${i}`);
  const easy = lines(15_000, (i) => (i === 7_500 ? 'changed' : String(i)));

  /** The median of three timed calls, in ms: a ratio of two such medians is what is compared. */
  async function medianMs(call: () => Promise<unknown>): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await call();
      times.push(performance.now() - start);
    }
    return times.sort((x, y) => x - y)[1]!;
  }

  it('is a correct, non-minimal diff that costs about what an easy diff of the same size costs, and other requests go on meanwhile', async () => {
    const store = await freshStore(client, 'diff bounded');
    const m = await memories().create(store.id, { path: '/big.txt', content: before });
    const hard = await memories().update(m.id, { memory_store_id: store.id, content: after });
    const e = await memories().create(store.id, { path: '/easy.txt', content: before });
    const small = await memories().update(e.id, { memory_store_id: store.id, content: easy });

    // A cheap request sent while the diff is being made is answered.
    const diffing = diff(store.id, hard.memory_version_id);
    const ping = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}`, { apiKey: server.adminKey });
    expect(ping.status).toBe(200);
    const d = await diffing;
    expect(d.minimal).toBe(false);
    expect(d.unified.startsWith(`--- /big.txt\t${m.memory_version_id}\n+++ /big.txt\t${hard.memory_version_id}\n@@ -1,15000 +1,15000 @@\n-0\n-1\n`)).toBe(true);
    expect(applyPatch(before, d.unified)).toBe(after);

    const easyDiff = await diff(store.id, small.memory_version_id);
    expect(easyDiff.minimal).toBe(true);
    expect(easyDiff.unified).toContain('-7500\n+changed\n');
    // Unbounded, the hard diff took 80 s against the easy one's milliseconds (a ratio in the thousands).
    const ratio = (await medianMs(() => diff(store.id, hard.memory_version_id))) / (await medianMs(() => diff(store.id, small.memory_version_id)));
    expect(ratio).toBeLessThan(50);
  });

  it('is bounded over MCP (memory_diff) and in the web console (Compare versions), which says the diff is not minimal', async () => {
    const store = await freshStore(client, 'diff bounded faces');
    const m = await memories().create(store.id, { path: '/big.txt', content: before });
    const u = await memories().update(m.id, { memory_store_id: store.id, content: after });

    const mcp = await connectMcp('http', server, server.adminKey);
    try {
      const answer = await mcp.call('memory_diff', { memory_store_id: store.id, memory_version_id: u.memory_version_id });
      expect(answer.isError).toBe(false);
      expect(answer.json.minimal).toBe(false);
      expect(applyPatch(before, answer.json.unified as string)).toBe(after);
    } finally {
      await mcp.close();
    }

    const signIn = await fetch(`${server.url}/admin/sign-in`, {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ api_key: server.adminKey }).toString(),
    });
    const cookie = `mnemo_console=${/mnemo_console=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')![1]}`;
    for (const layout of ['unified', 'split']) {
      const page = await fetch(`${server.url}/admin/stores/${store.id}/memories/${m.id}?from=${m.memory_version_id}&to=${u.memory_version_id}&layout=${layout}`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('differ in too many places to find their smallest diff quickly');
      expect(html).toContain('x14999');
    }
  });
});

/**
 * Two guards for checkpoints through the real server (issue 11, item 16): (a) a key limited to
 * store A, and a key of another workspace, can neither read the latest checkpoint nor restore by
 * agent and session in store B, even though B holds one: 404 (over HTTP and MCP); (b) every
 * successful restore returns every essential field exactly, whatever the budget, and a budget
 * below the essentials fails with the size they need, which then succeeds.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { extensions, type CheckpointBody, type WireRestore } from '../helpers/continuity.js';
import { connectMcp } from '../helpers/mcp.js';
import { createWorkspace, expectApiError, mintKey, sdkClient, useServer } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';
import { freshStore, sha256 } from './shapes.js';

let server: RunningServer;
let client: Anthropic;
let ext: ReturnType<typeof extensions>;

useServer((s, c) => {
  server = s;
  client = c;
  ext = extensions(c);
});

describe('checkpoints of a store the key cannot see', () => {
  let storeA: string;
  let storeB: string;
  const agent = 'agent-b';
  const session = 'sess-b';
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    storeA = (await freshStore(client, 'grant A')).id;
    storeB = (await freshStore(client, 'grant B')).id;
    await ext.checkpoint(storeA, { agent_id: agent, session_id: session, goal: 'in A' });
    await ext.checkpoint(storeB, { agent_id: agent, session_id: session, goal: 'secret goal in B' });
    const wsId = (await createWorkspace(server, 'elsewhere')).id;
    keys['limited to store A (read_only)'] = (await mintKey(server, 'read_only', { body: { name: 'a-only', memory_store_ids: [storeA] } })).secret;
    keys['limited to store A (read_write)'] = (await mintKey(server, 'read_write', { body: { name: 'a-only-rw', memory_store_ids: [storeA] } })).secret;
    keys['of another workspace (admin)'] = (await mintKey(server, 'admin', { body: { name: 'other-ws' }, headers: { 'anthropic-workspace-id': wsId } })).secret;
  });

  it('the latest checkpoint and a restore by agent and session in store B are 404 for both keys, over HTTP', async () => {
    // The checkpoint in B is there: the operator reads it.
    expect((await ext.latest(storeB, agent, session)).goal).toBe('secret goal in B');
    for (const [label, secret] of Object.entries(keys)) {
      const theirs = extensions(sdkClient(server.url, secret));
      const latest = await expectApiError(theirs.latest(storeB, agent, session), 404, 'not_found_error');
      const restored = await expectApiError(theirs.restoreLatest(storeB, agent, session), 404, 'not_found_error');
      for (const err of [latest, restored]) expect(err.message, label).not.toContain('secret goal');
    }
    // The store-limited keys still restore their own store's checkpoint.
    const own = extensions(sdkClient(server.url, keys['limited to store A (read_only)']!));
    expect((await own.restoreLatest(storeA, agent, session)).goal).toBe('in A');
  });

  it('memory_restore by agent and session in store B is not_found for both keys, over MCP', async () => {
    for (const [label, secret] of Object.entries(keys)) {
      const mcp = await connectMcp('http', server, secret);
      try {
        const answer = await mcp.call('memory_restore', { memory_store_id: storeB, agent_id: agent, session_id: session });
        expect(answer.isError, label).toBe(true);
        expect(answer.text, label).toMatch(/^Error not_found: /);
        expect(answer.text, label).not.toContain('secret goal');
      } finally {
        await mcp.close();
      }
    }
  });
});

/** The fields a restore must return exactly, as saved. */
function essentials(b: CheckpointBody) {
  return {
    goal: b.goal,
    constraints: b.constraints ?? [],
    decisions: b.decisions ?? [],
    open_tasks: b.open_tasks ?? [],
    next_action: b.next_action ?? null,
    capsule: b.capsule ?? '',
  };
}

const BUNDLES: [label: string, body: CheckpointBody][] = [
  [
    'several short items, a summary and noted references',
    {
      agent_id: 'agent-g', session_id: 'g-1', goal: 'ship the release',
      summary: 'We spent the morning on the release notes. '.repeat(20),
      constraints: ['no new dependencies', 'keep the wire format', 'tests must pass', 'no force pushes'],
      decisions: ['use SQLite', 'WAL mode', 'fsync on commit'],
      open_tasks: ['write docs', 'tag v1', 'announce'],
      next_action: 'run the full suite',
      capsule: 'state: green; branch: main',
      references: [
        { path: '/notes/plan.md', content_sha256: sha256('plan'), note: 'the plan, read it first '.repeat(10) },
        { path: '/notes/risks.md', content_sha256: sha256('risks'), note: 'known risks' },
      ],
    },
  ],
  [
    'long constraints and decisions, no summary',
    {
      agent_id: 'agent-g', session_id: 'g-2', goal: 'migrate the schema',
      constraints: ['c'.repeat(300), 'second constraint '.repeat(12), 'ü'.repeat(150), 'last one'],
      decisions: ['d'.repeat(400), 'decided: ' + 'x'.repeat(90)],
      open_tasks: ['t1', 't2', 't3', 't4', 't5', 'task with ünïcödé'],
      next_action: null,
      capsule: 'k'.repeat(700),
    },
  ],
  [
    'many small items and many notes',
    {
      agent_id: 'agent-g', session_id: 'g-3', goal: 'triage',
      summary: 's'.repeat(1500),
      constraints: Array.from({ length: 12 }, (_, i) => `constraint ${i}`),
      decisions: Array.from({ length: 9 }, (_, i) => `decision ${i}`),
      open_tasks: Array.from({ length: 15 }, (_, i) => `task ${i}`),
      next_action: 'pick the first task',
      references: Array.from({ length: 6 }, (_, i) => ({ path: `/r/${i}.md`, content_sha256: sha256(String(i)), note: `note ${i} `.repeat(20) })),
    },
  ],
];

describe('restore budgets', () => {
  it.each(BUNDLES)('with %s, every restore that succeeds returns every essential field exactly; below them it fails with the size needed', async (_label, body) => {
    const store = (await freshStore(client, 'budgets')).id;
    const saved = await ext.checkpoint(store, body);
    const expected = essentials(body);
    const refsWithout = (body.references ?? []).map((r) => ({ path: r.path ?? null, content_sha256: r.content_sha256 ?? null }));

    function assertExact(r: WireRestore, maxBytes: number): void {
      expect(r).toMatchObject(expected);
      expect(r.checkpoint_id).toBe(saved.id);
      expect(r.size_bytes).toBeLessThanOrEqual(maxBytes);
      expect(r.references.map((x) => ({ path: x.path, content_sha256: x.content_sha256 }))).toEqual(refsWithout);
      // Only the summary and notes may be left out, and only when the answer says so.
      if (!r.omitted.includes('summary')) expect(r.summary).toBe(body.summary ?? '');
      else expect(r.summary).toBeNull();
      const notes = (body.references ?? []).map((x) => x.note ?? null);
      expect(r.references.map((x) => x.note)).toEqual(r.omitted.includes('references.note') ? notes.map(() => null) : notes);
    }

    const restore = (max_bytes: number) => ext.restore(store, saved.id, { max_bytes });
    // Find the size the essentials need from the refusal at the smallest budget.
    let needed: number | null = null;
    const smallest = await restore(512).catch(() => null);
    if (smallest) assertExact(smallest, 512);
    else {
      const err = await expectApiError(restore(512), 400, 'invalid_request_error');
      needed = (err as unknown as { needed_bytes: number }).needed_bytes;
      expect(needed).toBeGreaterThan(512);
    }
    const budgets = new Set([512, 600, 1024, 1500, 2048, 3000, 4096, 8192, 32 * 1024]);
    if (needed !== null) for (const b of [needed - 1, needed, needed + 1]) if (b >= 512) budgets.add(b);
    expect(needed, 'these bundles do not fit 512 bytes').not.toBeNull();
    const omittedSeen = new Set<string>();
    for (const max of [...budgets].sort((a, b) => a - b)) {
      if (needed !== null && max < needed) {
        const err = await expectApiError(restore(max), 400, 'invalid_request_error');
        expect((err as unknown as { needed_bytes: number }).needed_bytes, `max_bytes ${max}`).toBe(needed);
        expect(err.message).toContain(`max_bytes >= ${needed}`);
      } else {
        const r = await restore(max);
        assertExact(r, max);
        omittedSeen.add(r.omitted.join(','));
      }
    }
    // The budgets reach both the full answer and, when there is something to leave out, the lean one.
    expect(omittedSeen.has('')).toBe(true);
    if (body.summary || body.references?.some((x) => x.note)) expect(omittedSeen.size).toBeGreaterThan(1);
    // By agent and session too, at the tightest budget that works.
    const tight = needed ?? 512;
    assertExact(await ext.restoreLatest(store, body.agent_id, body.session_id, { max_bytes: tight }), tight);
  });
});


/**
 * `mnemo keys` and `mnemo workspaces` apply the API's rules: a name the API refuses (empty, over 255
 * characters), a `--stores` list that names no store, or a duplicated store is refused or folded
 * exactly as POST /v1/api_keys and POST /v1/workspaces do it (the same parsers, src/validate), with
 * the flag named and exit 2; and a workspace that does not exist is "workspace not found" for every
 * keys subcommand. Every case drives `node dist/src/main.js` as a child process.
 */
import { describe, expect, it } from 'vitest';
import { openCore } from '../helpers/core.js';
import { runCli } from '../helpers/server.js';
import { parseKeyCreate, parseWorkspaceCreate } from '../../src/validate/index.js';

const FAST = { timeoutMs: 15_000 };

/** A data dir holding a mnemo database with one store in the default workspace (nothing running on it). */
async function dataDir(): Promise<{ dir: string; storeId: string }> {
  const core = await openCore();
  const store = await core.service.createStore(core.caller, { name: 'notes', description: '', metadata: {} });
  await core.close();
  return { dir: core.dir, storeId: store.id };
}

/** What the API's parser says of a body, without its field (the CLI names the flag instead). */
function apiRefusal(parse: () => unknown, field: string): string {
  try {
    parse();
  } catch (err) {
    const message = (err as Error).message;
    expect(message.startsWith(`${field}: `), message).toBe(true);
    return message.slice(field.length);
  }
  throw new Error('the API accepted it');
}

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>[];

describe('keys and workspaces from the command line', () => {
  it('workspaces create refuses a name the API refuses, naming <name>, exit 2, and creates nothing', async () => {
    const { dir } = await dataDir();
    const before = json((await runCli(['workspaces', 'list', '--json', '--data-dir', dir])).stdout).length;
    for (const name of ['', 'w'.repeat(256), 'tab\there']) {
      const res = await runCli(['workspaces', 'create', name, '--data-dir', dir], {}, FAST);
      expect(res.code, `${JSON.stringify(name)}\n${res.stderr}`).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`mnemo workspaces create: <name>${apiRefusal(() => parseWorkspaceCreate({ name }), 'name')}`);
    }
    expect(json((await runCli(['workspaces', 'list', '--json', '--data-dir', dir])).stdout)).toHaveLength(before);

    const longest = await runCli(['workspaces', 'create', 'w'.repeat(255), '--data-dir', dir], {}, FAST);
    expect(longest.code, longest.stderr).toBe(0);
  });

  it('keys create refuses a --name the API refuses and a --stores that names no store, naming the flag, exit 2, and mints nothing', async () => {
    const { dir } = await dataDir();
    const count = async () => json((await runCli(['keys', 'list', '--json', '--data-dir', dir])).stdout).length;
    const before = await count();
    for (const name of ['', 'k'.repeat(256)]) {
      const res = await runCli(['keys', 'create', '--role', 'read_only', '--name', name, '--data-dir', dir], {}, FAST);
      expect(res.code, `${JSON.stringify(name)}\n${res.stderr}`).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`mnemo keys create: --name${apiRefusal(() => parseKeyCreate({ name, role: 'read_only' }), 'name')}`);
    }
    const noStore = apiRefusal(() => parseKeyCreate({ name: 'k', role: 'read_only', memory_store_ids: [] }), 'memory_store_ids');
    for (const stores of [',', '']) {
      const res = await runCli(['keys', 'create', '--role', 'read_only', '--stores', stores, '--data-dir', dir], {}, FAST);
      expect(res.code, `--stores ${JSON.stringify(stores)}\n${res.stderr}`).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`mnemo keys create: --stores${noStore}`);
    }
    expect(await count()).toBe(before);
  });

  it('keys create keeps a store named twice in --stores once, as the API does', async () => {
    const { dir, storeId } = await dataDir();
    const res = await runCli(['keys', 'create', '--role', 'read_only', '--name', 'twice', '--stores', `${storeId},${storeId}`, '--data-dir', dir], {}, FAST);
    expect(res.code, res.stderr).toBe(0);
    const key = json((await runCli(['keys', 'list', '--json', '--data-dir', dir])).stdout).find((k) => k['name'] === 'twice');
    expect(key?.['memory_store_ids']).toEqual([storeId]);
  });

  it('keys list and keys revoke refuse a workspace that does not exist, as keys create does', async () => {
    const { dir } = await dataDir();
    for (const args of [['keys', 'list'], ['keys', 'list', '--json'], ['keys', 'revoke', 'apikey_nope'], ['keys', 'create', '--role', 'read_only']]) {
      const res = await runCli([...args, '--workspace', 'wrkspc_nope', '--data-dir', dir], {}, FAST);
      expect(res.code, `${args.join(' ')}\n${res.stderr}`).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain('mnemo: workspace not found: wrkspc_nope');
    }
  });
});

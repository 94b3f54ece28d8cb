/**
 * `mnemo keys` and `mnemo workspaces`: a workspace that does not exist is "workspace not found" for
 * every keys subcommand. Every case drives `node dist/src/main.js` as a child process.
 */
import { describe, expect, it } from 'vitest';
import { openCore } from '../helpers/core.js';
import { runCli } from '../helpers/server.js';

const FAST = { timeoutMs: 15_000 };

/** A data dir holding a mnemo database (nothing running on it). */
async function dataDir(): Promise<{ dir: string }> {
  const core = await openCore();
  await core.close();
  return { dir: core.dir };
}

describe('keys and workspaces from the command line', () => {
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

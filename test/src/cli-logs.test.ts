/**
 * `mnemo mount` and `mnemo mcp` log in JSON lines (README, Logs): why one of them cannot start (an
 * unknown store, a mount point that is a file or not empty, no MNEMO_API_KEY) is its last line, at
 * level "error", not "info". Every case drives `node dist/src/main.js` as a child process.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCore } from '../helpers/core.js';
import { runCli } from '../helpers/server.js';
import { tmpDir } from '../helpers/tmp.js';

const FAST = { timeoutMs: 15_000 };

/** The JSON log line whose message contains `text`. */
function lineWith(stderr: string, text: string): Record<string, unknown> {
  const lines = stderr.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  const line = lines.find((l) => String(l['msg']).includes(text));
  expect(line, stderr).toBeDefined();
  return line!;
}

describe('why a logging command cannot start', () => {
  it('mnemo mount logs an unknown store, a file or a non-empty directory as its mount point at error level, and exits 1', async () => {
    const core = await openCore();
    const store = await core.service.createStore(core.caller, { name: 'notes', description: '', metadata: {} });
    await core.close();
    const scratch = tmpDir('mnemo-logs-');
    const file = join(scratch, 'plain.txt');
    writeFileSync(file, 'mine\n');
    const full = join(scratch, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'mine.txt'), 'mine\n');
    const cases = [
      { args: ['memstore_nope', join(scratch, 'mnt')], says: 'mnemo mount: no memory store memstore_nope' },
      { args: [store.id, file], says: `mnemo mount: ${file} is a file, not a directory` },
      { args: [store.id, full], says: `mnemo mount: ${full} is not empty (1 entry)` },
    ];
    for (const { args, says } of cases) {
      const res = await runCli(['mount', ...args, '--data-dir', core.dir], {}, FAST);
      expect(res.timedOut, says).toBe(false);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stdout).toBe('');
      expect(lineWith(res.stderr, says)['level']).toBe('error');
    }
  });

  it('mnemo mcp without MNEMO_API_KEY logs why at error level and exits 2', async () => {
    const core = await openCore();
    await core.close();
    const res = await runCli(['mcp', '--data-dir', core.dir], {}, FAST);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(lineWith(res.stderr, 'mnemo mcp needs MNEMO_API_KEY')['level']).toBe('error');
  });
});

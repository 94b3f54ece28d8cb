/**
 * The README's shell examples run as written, against a real server.
 *
 * The rules (also stated in the README, under "Using the API"):
 * 1. Every ```sh fenced block of README.md runs, unless the line just before its fence is
 *    `<!-- readme-test: skip (why) -->`.
 * 2. A block runs with `bash` and `set -euo pipefail`, in an empty temporary directory that is
 *    also $HOME, with `MNEMO_URL` (the server), `MNEMO_KEY` (its admin key, the operator key) and
 *    `MNEMO_DATA_DIR` (its data directory) set, and `mnemo` on the PATH (a symlink to bin/mnemo.js,
 *    as `npm link` makes). All blocks share one server, in README order; each must exit 0.
 * 3. A comment line starting `# →` (and the `#` lines that continue it) shows an answer: each
 *    `"field":value` pair in it whose value is a string without `…`, a number, true, false or
 *    null must appear verbatim in what the block prints.
 * 4. A block prints no error envelope (`"type":"error"`) unless one of its `# →` answers shows one.
 * Processes a block leaves running (a backgrounded `mnemo mount`) get SIGTERM when it ends.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startServer, type RunningServer } from './helpers/server.js';

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  heading: string;
  script: string;
  skip: string | null;
}

const SKIP = /^<!--\s*readme-test:\s*skip\s*\((.+)\)\s*-->$/;

/** The ```sh blocks of a markdown text, with the heading above each and its skip reason, if any. */
export function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#{1,6} /.test(l)) heading = l.replace(/^#+ /, '');
    if (!/^```/.test(l)) continue;
    const lang = l.slice(3).trim();
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (lang !== 'sh') continue;
    const skip = SKIP.exec((lines[start - 1] ?? '').trim())?.[1] ?? null;
    blocks.push({ line: start + 1, heading, script: body.join('\n'), skip });
  }
  return blocks;
}

/** The `"field":value` pairs the block's `# →` comments promise (rule 3). */
export function promisedPairs(script: string): string[] {
  const shown: string[] = [];
  let inAnswer = false;
  for (const l of script.split('\n')) {
    const t = l.trim();
    if (t.startsWith('# →')) inAnswer = true;
    else if (!t.startsWith('#')) inAnswer = false;
    if (inAnswer) shown.push(t);
  }
  const pairs = shown.join('\n').match(/"[A-Za-z_]+":("[^"\n]*"|-?\d+(\.\d+)?|true|false|null)/g) ?? [];
  return pairs.filter((p) => !p.includes('…'));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** True while any process of the group `pgid` lives. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the block in a process group of its own, so that whatever it left running (by mistake, or
 * a failed block's background mount) is stopped by that group's id, and waited for, before the
 * test removes its directory.
 */
async function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const run = await new Promise<Run & { pid: number }>((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), 50_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, pid: child.pid! });
    });
  });
  if (groupAlive(run.pid)) {
    process.kill(-run.pid, 'SIGTERM');
    for (let i = 0; i < 100 && groupAlive(run.pid); i++) await new Promise((r) => setTimeout(r, 100));
  }
  return { code: run.code, stdout: run.stdout, stderr: run.stderr };
}

const blocks = shellBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'));
let server: RunningServer;
let binDir: string;

beforeAll(async () => {
  server = await startServer();
  binDir = mkdtempSync(join(tmpdir(), 'mnemo-readme-bin-'));
  symlinkSync(join(REPO_ROOT, 'bin', 'mnemo.js'), join(binDir, 'mnemo'));
});
afterAll(async () => {
  await server?.stop();
  if (binDir) rmSync(binDir, { recursive: true, force: true });
});

describe('the README', () => {
  it('has shell examples, and every skipped one says why', () => {
    expect(blocks.filter((b) => b.skip === null).length).toBeGreaterThan(3);
    for (const b of blocks.filter((x) => x.skip !== null)) expect(b.skip!.trim().length, `README.md:${b.line}`).toBeGreaterThan(3);
  });

  for (const b of blocks.filter((x) => x.skip === null)) {
    it(`runs the sh block at README.md:${b.line} (${b.heading}) and prints what it shows`, async () => {
      const home = mkdtempSync(join(tmpdir(), 'mnemo-readme-'));
      try {
        mkdirSync(join(home, 'tmp'));
        const env: NodeJS.ProcessEnv = {};
        for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_')) env[k] = v;
        Object.assign(env, {
          HOME: home,
          PATH: `${binDir}:${process.env['PATH'] ?? ''}`,
          MNEMO_URL: server.url,
          MNEMO_KEY: server.adminKey,
          MNEMO_DATA_DIR: server.dataDir,
        });
        const r = await bash(b.script, home, env);
        expect(r.code, `README.md:${b.line} exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
        if (!promisedPairs(b.script).includes('"type":"error"')) {
          expect(r.stdout, `README.md:${b.line} printed an error envelope`).not.toContain('"type":"error"');
        }
        for (const pair of promisedPairs(b.script)) {
          expect(r.stdout.includes(pair), `README.md:${b.line} shows ${pair}, but printed:\n${r.stdout}`).toBe(true);
        }
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });
  }
});

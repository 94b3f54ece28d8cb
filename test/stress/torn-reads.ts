/**
 * @module Stress run for issue 12 item 1 (not part of the suite): the two-session race that once
 * counted 8,817 torn reads in 228,248 operations, longer and under CPU load. Child processes only:
 * a mount host serving one store at two session mounts, a python writer saving a file in session A
 * again and again (each text says how long it is), API updates of a second file through the host,
 * and a python reader in session B that stats and reads both files whole, checking every text it
 * gets. `node dist/test/stress/torn-reads.js [rounds] [seconds] [busy] [plain|atomic]` (atomic: the
 * writer saves as editors do, a temp file renamed over the name).
 *
 * A text is `<length>:<digest of the rest>:` then filler up to that length, so a read cut short by a
 * stale cached size, padded with NUL bytes up to one, or mixing two versions fails its own check.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { output } from './child.js';

const [rounds = 3, seconds = 20, busy = 2] = process.argv.slice(2, 5).map(Number);
const saving = process.argv[5] === 'atomic' ? 'atomic' : 'plain';
const HOST = new URL('../helpers/mount-host.js', import.meta.url).pathname;

// Sizes jump between small and large both ways, so that the size the kernel cached is wrong in
// both directions (a cut-short read and a NUL-padded one).
const TEXT = String.raw`
import hashlib, random
def text(n, tag):
    body = (tag * n)[:n]
    head = '%d:%s:' % (n, hashlib.sha256(body.encode()).hexdigest()[:16])
    return head + body
def check(data):
    try:
        n, digest, body = data.decode().split(':', 2)
    except Exception:
        return 'unparsed'
    if b'\0' in data: return 'nul'
    if len(body) != int(n): return 'short' if len(body) < int(n) else 'long'
    if hashlib.sha256(body.encode()).hexdigest()[:16] != digest: return 'mixed'
    return None
def size():
    return random.choice((random.randint(1, 200), random.randint(2000, 9000), random.randint(40000, 70000)))
`;

const WRITER = TEXT + String.raw`
import os, sys, time
end = time.time() + float(sys.argv[1]); n = 0
atomic = sys.argv[2] == 'atomic'
while time.time() < end:
    # Atomic: as editors and sed -i save, a temp file renamed over the name (a new inode each time).
    with open('mount.md.tmp' if atomic else 'mount.md', 'w') as f: f.write(text(size(), 'abcdefghij'[n % 10]))
    if atomic: os.rename('mount.md.tmp', 'mount.md')
    n += 1
print(n)
`;

// Each pass: stat both files (the kernel caches what it learns), then read each one whole.
const READER = TEXT + String.raw`
import json, os, sys, time
end = time.time() + float(sys.argv[1]); bad = {}; reads = 0; errors = {}; samples = []
def describe(name, data):
    # The runs of equal bytes after the head: which versions the bytes came from, and where.
    head, runs = data[:24], []
    for i, c in enumerate(data[24:]):
        if runs and runs[-1][0] == c: runs[-1][1] += 1
        else: runs.append([c, 1])
    return '%s %d bytes, head %r, runs %s' % (name, len(data), head, [(chr(c), k) for c, k in runs[:8]])
while time.time() < end:
    for name in ('mount.md', 'api.md'):
        try:
            os.stat(name)
            with open(name, 'rb') as f: data = f.read()
        except OSError as e:
            errors[e.strerror] = errors.get(e.strerror, 0) + 1
            continue
        reads += 1
        why = check(data)
        if why:
            bad[name + ':' + why] = bad.get(name + ':' + why, 0) + 1
            if len(samples) < 5: samples.append(describe(name, data))
print(json.dumps({'reads': reads, 'bad': bad, 'errors': errors, 'samples': samples}))
`;


/** A text in the format the python side checks. */
function headed(body: string): string {
  return `${body.length}:${createHash('sha256').update(body).digest('hex').slice(0, 16)}:${body}`;
}

/** The API side: update /api.md through the host's service until the deadline, one call at a time, in the texts' format. */
async function apiWriter(host: ReturnType<typeof spawn>, lines: AsyncIterator<string>, until: number): Promise<number> {
  let n = 0;
  while (Date.now() < until) {
    const size = [1 + (n * 37) % 200, 2000 + (n * 911) % 7000, 40000 + (n * 7919) % 30000][n % 3]!;
    host.stdin!.write(JSON.stringify({ id: n, op: 'update', path: '/api.md', content: headed('klmnopqrst'[n % 10]!.repeat(size)) }) + '\n');
    const reply = await lines.next();
    if (reply.done) throw new Error('the mount host exited');
    const answer = JSON.parse(reply.value) as { ok: boolean; error?: string };
    if (!answer.ok) throw new Error(`an API update failed: ${answer.error}`);
    n++;
  }
  return n;
}

const totals = { saves: 0, updates: 0, reads: 0, bad: {} as Record<string, number>, errors: {} as Record<string, number> };
for (let r = 0; r < rounds; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-torn-'));
  const a = join(dir, 'mnt-a');
  const b = join(dir, 'mnt-b');
  const seed = { '/mount.md': headed('x'), '/api.md': headed('x') };
  const host = spawn(process.execPath, [HOST, '--db', join(dir, 'db'), '--mount', a, '--session', 'sesn_a', '--also', `${b}=sesn_b`, '--seed', JSON.stringify(seed)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: host.stdout! })[Symbol.asyncIterator]();
  await lines.next();
  const burners = Array.from({ length: busy }, () => spawn('bash', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  const [saves, updates, out] = await Promise.all([
    output('python3', ['-c', WRITER, String(seconds), saving], a),
    apiWriter(host, lines, Date.now() + seconds * 1000),
    output('python3', ['-c', READER, String(seconds)], b),
  ]);
  for (const x of burners) x.kill('SIGKILL');
  const got = JSON.parse(out || '{"reads":0,"bad":{"no-output":1},"errors":{}}') as typeof totals;
  totals.saves += Number(saves);
  totals.updates += updates;
  totals.reads += got.reads;
  for (const [k, n] of Object.entries(got.bad)) totals.bad[k] = (totals.bad[k] ?? 0) + n;
  for (const [k, n] of Object.entries(got.errors)) totals.errors[k] = (totals.errors[k] ?? 0) + n;
  for (const line of (got as { samples?: string[] }).samples ?? []) console.log(`  ${line}`);
  console.log(`round ${r + 1}: ${saves} saves in session A, ${updates} API updates, ${got.reads} reads in session B, torn ${JSON.stringify(got.bad)}, errors ${JSON.stringify(got.errors)}`);
  host.kill('SIGTERM');
  await new Promise((ok) => host.once('exit', ok));
  for (const m of [a, b]) if (readFileSync('/proc/mounts', 'utf8').includes(m)) await output('fusermount3', ['-uz', m], dir);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`total: ${JSON.stringify(totals)}`);

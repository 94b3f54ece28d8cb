/**
 * @module Stress run (not part of the suite): every byte a mount returns must be some writer's whole
 * bytes. Two sessions' mounts of one store and the API write the same names (whole files, O_APPEND
 * appends, atomic replaces, truncates to zero, renames of files and directories, unlinks, chmod,
 * utime) while each session also reads them. Every writer writes self-checking records
 * (`<length>:<digest>:<body>\n`), so a read that is cut short, padded with NUL bytes, or mixes two
 * versions fails to parse as whole records. When the writers stop, both mounts and the API must
 * show the same tree, the same texts and the same modes, all whole records. Child processes only.
 * `node dist/test/stress/records.js [seeds] [ops per session] [api ops]`. A bad read is reported
 * with the descriptor's inode number and size before and after the read, what the name shows
 * then, and the session's last operations.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { output } from './child.js';

const [seeds = 4, ops = 3000, apiOps = 1500] = process.argv.slice(2).map(Number);
const HOST = new URL('../helpers/mount-host.js', import.meta.url).pathname;
/** The sessions' operations, drawn evenly (MIX=replace,read,read narrows them: atomic saves only). */
const MIX = process.env['MIX'] ?? 'write,append,replace,read,read,read,trunc,unlink,rename,mvdir,chmod,utime';
/** HOST_LOG_DIR=<dir> keeps each seed's mount host log there (host-<seed>.log), to read beside a bad read's report. */
const LOG_DIR = process.env['HOST_LOG_DIR'];
/** The API's operations, in turn (API_OPS=update,update: only updates). */
const API_OPS = (process.env['API_OPS'] ?? 'create,update,update,delete,rename').split(',');

const RECORDS = String.raw`
import hashlib
def record(rnd, tag):
    body = ''.join(rnd.choice('abcdefghij') for _ in range(rnd.randrange(300)))
    return '%s:%d:%s:%s\n' % (tag, len(body), hashlib.sha256(body.encode()).hexdigest()[:8], body)
def check(data):
    # None when data is whole records; else why not.
    if b'\0' in data: return 'nul'
    try: text = data.decode()
    except UnicodeDecodeError: return 'utf8'
    i = 0
    while i < len(text):
        parts = text[i:].split(':', 3)
        if len(parts) < 4: return 'cut'
        tag, n, digest, rest = parts
        try: n = int(n)
        except ValueError: return 'head'
        body = rest[:n]
        if len(body) < n or rest[n:n + 1] != '\n': return 'cut'
        if hashlib.sha256(body.encode()).hexdigest()[:8] != digest: return 'mixed'
        i += len(tag) + len(str(n)) + len(digest) + 3 + n + 1
    return None
`;

const SESSION = RECORDS + String.raw`
import errno, json, os, random, sys, time
os.chdir(sys.argv[1]); tag = sys.argv[4]; rnd = random.Random(int(sys.argv[2])); count = int(sys.argv[3]); mix = sys.argv[5].split(',')
names = ['a.md', 'b.md', 'd/c.md', 'd/e/f.md', 'g/h.md']
dirs = ['d', 'd/e', 'g', 'k']
tally, bad, recent = {}, [], []
for i in range(count):
    p, q = rnd.choice(names), rnd.choice(names)
    k = rnd.choice(mix)
    try:
        if k in ('write', 'append', 'replace'):
            os.makedirs(os.path.dirname(p) or '.', exist_ok=True)
        if k == 'write':
            with open(p, 'w') as f: f.write(''.join(record(rnd, tag) for _ in range(rnd.randrange(1, 4))))
        elif k == 'append':
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try: os.write(fd, record(rnd, tag).encode())
            finally: os.close(fd)
        elif k == 'replace':
            tmp = os.path.join(os.path.dirname(p), '.%s.tmp%s' % (os.path.basename(p), tag))
            with open(tmp, 'w') as f: f.write(record(rnd, tag))
            os.rename(tmp, p)
        elif k == 'read':
            with open(p, 'rb') as f:
                before = os.fstat(f.fileno())
                data = f.read()
                after = os.fstat(f.fileno())
            why = check(data)
            if why:
                k = 'read-bad-' + why
                # What the descriptor and the name said, and what a second read finds: which file's
                # size cut (or padded) the read.
                try:
                    now = os.stat(p)
                    with open(p, 'rb') as f: again = f.read()
                    seen = 'name now ino %d size %d, read again %d bytes %s' % (now.st_ino, now.st_size, len(again), check(again) or 'whole')
                except OSError as e:
                    seen = 'name now ' + errno.errorcode[e.errno]
                if len(bad) < 5: bad.append('t %.3f %s %s %d bytes (fd ino %d size %d, after read size %d; %s; op %d after %s) %r' % (time.time(), p, why, len(data), before.st_ino, before.st_size, after.st_size, seen, i, recent[-6:], data[:80]))
        elif k == 'trunc': os.truncate(p, 0)
        elif k == 'unlink': os.unlink(p)
        elif k == 'rename': os.rename(p, q)
        elif k == 'mvdir':
            a, b = rnd.choice(dirs), rnd.choice(dirs)
            p, q = a, b
            if not (b + '/').startswith(a + '/'): os.rename(a, b)
        elif k == 'chmod': os.chmod(p, rnd.choice([0o600, 0o640, 0o644]))
        elif k == 'utime':
            t = rnd.randrange(1_000_000_000, 1_700_000_000); os.utime(p, (t, t))
        key = k + ':ok'
    except OSError as e:
        key = k + ':' + errno.errorcode[e.errno]
    tally[key] = tally.get(key, 0) + 1
    recent.append('%s %s%s' % (key, p, ' ' + q if k in ('rename', 'mvdir') else ''))
print(json.dumps({'tally': tally, 'bad': bad}, sort_keys=True))
`;

/** Walks a mount: each file's text and mode (names starting with a dot are scratch files: skipped). */
const WALK = RECORDS + String.raw`
import json, os, stat, sys
out = {}
for root, ds, fs in os.walk(sys.argv[1]):
    ds[:] = [d for d in ds if d != '.history']
    for f in fs:
        if f.startswith('.'): continue
        p = os.path.join(root, f)
        with open(p, 'rb') as h: data = h.read()
        out['/' + os.path.relpath(p, sys.argv[1])] = {'text': data.decode(errors='replace'), 'mode': oct(stat.S_IMODE(os.stat(p).st_mode)), 'bad': check(data)}
print(json.dumps(out, sort_keys=True))
`;

/** Answers a disk could give in these races: the other writers remove and move names and directories. */
const EXPECTED = new Set(['ok', 'ENOENT', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR', 'EISDIR', 'EINVAL']);

/** The records format's check (the python side's `check`), for stored texts. */
function wholeRecords(text: string): boolean {
  for (let i = 0; i < text.length; ) {
    const m = /^(\w+):(\d+):([0-9a-f]{8}):/.exec(text.slice(i, i + 40));
    if (!m) return false;
    const body = text.slice(i + m[0].length, i + m[0].length + Number(m[2]));
    if (body.length !== Number(m[2]) || text[i + m[0].length + body.length] !== '\n') return false;
    if (createHash('sha256').update(body).digest('hex').slice(0, 8) !== m[3]) return false;
    i += m[0].length + body.length + 1;
  }
  return true;
}

function record(n: number): string {
  const body = 'klmnopqrst'.repeat(30).slice(0, (n * 37) % 300);
  return `api:${body.length}:${createHash('sha256').update(body).digest('hex').slice(0, 8)}:${body}\n`;
}

/** The API writer: creates, updates, renames and deletes the same names through the host, one call at a time. */
async function apiWriter(host: ReturnType<typeof spawn>, lines: AsyncIterator<string>, count: number): Promise<Record<string, number>> {
  const names = ['/a.md', '/b.md', '/d/c.md', '/d/e/f.md', '/g/h.md'];
  const tally: Record<string, number> = {};
  for (let n = 0; n < count; n++) {
    // The names shift by one each round of the operations: with as many names as operations, each
    // operation otherwise always met the same name (every rename was /d/e/f.md onto itself).
    const round = Math.floor(n / API_OPS.length);
    const path = names[(n * 7 + round) % names.length]!;
    const op = API_OPS[n % API_OPS.length]!;
    const cmd = { id: n, op, path, content: record(n) + record(n + 1), to: names[(n * 3 + 1 + 2 * round) % names.length] };
    host.stdin!.write(JSON.stringify(cmd) + '\n');
    const reply = await lines.next();
    if (reply.done) throw new Error('the mount host exited');
    const answer = JSON.parse(reply.value) as { ok: boolean; code?: string | null };
    const key = `${op}:${answer.ok ? 'ok' : (answer.code ?? 'error')}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}

const problems: string[] = [];
for (let seed = 1; seed <= seeds; seed++) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-records-'));
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  const hostLog = LOG_DIR ? openSync(join(LOG_DIR, `host-${seed}.log`), 'w') : 'ignore';
  const host = spawn(process.execPath, [HOST, '--db', join(dir, 'db'), '--mount', a, '--session', 'sesn_a', '--also', `${b}=sesn_b`], {
    stdio: ['pipe', 'pipe', hostLog === 'ignore' ? 'ignore' : hostLog],
  });
  if (typeof hostLog === 'number') closeSync(hostLog);
  const lines = createInterface({ input: host.stdout! })[Symbol.asyncIterator]();
  await lines.next();
  const [outA, outB, api] = await Promise.all([
    output('python3', ['-c', SESSION, a, String(seed), String(ops), 'A', MIX], a),
    output('python3', ['-c', SESSION, b, String(seed + 1000), String(ops), 'B', MIX], b),
    apiWriter(host, lines, apiOps),
  ]);
  for (const [name, out] of [['A', outA], ['B', outB]] as const) {
    const { tally, bad } = JSON.parse(out || '{"tally": {"no-output:EIO": 1}, "bad": []}') as { tally: Record<string, number>; bad: string[] };
    for (const [k, n] of Object.entries(tally)) {
      if (!EXPECTED.has(k.split(':')[1]!) || k.startsWith('read-bad')) problems.push(`seed ${seed} session ${name}: ${k} ×${n}`);
    }
    for (const b of bad) problems.push(`seed ${seed} session ${name}: ${b}`);
    console.log(`seed ${seed} session ${name}: ${JSON.stringify(tally)}`);
  }
  console.log(`seed ${seed} api: ${JSON.stringify(api)}`);
  // The mounts follow writes made elsewhere within 100 ms, and the kernel's caches time out in 1 s.
  await new Promise((ok) => setTimeout(ok, 2500));
  host.stdin!.write(JSON.stringify({ id: -2, op: 'tree' }) + '\n');
  const treeReply = JSON.parse((await lines.next()).value as string) as { result: Record<string, string> };
  const viaApi = Object.fromEntries(Object.entries(treeReply.result).filter(([p]) => !p.split('/').some((s) => s.startsWith('.'))));
  const walked = await Promise.all([a, b].map(async (m) => JSON.parse(await output('python3', ['-c', WALK, m], m)) as Record<string, { text: string; mode: string; bad: string | null }>));
  const texts = walked.map((w) => Object.fromEntries(Object.entries(w).map(([p, f]) => [p, f.text])));
  const modes = walked.map((w) => JSON.stringify(Object.fromEntries(Object.entries(w).map(([p, f]) => [p, f.mode]))));
  if (JSON.stringify(texts[0]) !== JSON.stringify(viaApi) || JSON.stringify(texts[1]) !== JSON.stringify(viaApi)) {
    problems.push(`seed ${seed}: the mounts and the API disagree: A ${JSON.stringify(Object.keys(texts[0]!))} B ${JSON.stringify(Object.keys(texts[1]!))} API ${JSON.stringify(Object.keys(viaApi))}`);
    for (const p of new Set([...Object.keys(viaApi), ...Object.keys(texts[0]!), ...Object.keys(texts[1]!)])) {
      const [x, y, z] = [texts[0]![p], texts[1]![p], viaApi[p]];
      if (x !== z || y !== z) problems.push(`  ${p}: A ${x?.length ?? 'none'} B ${y?.length ?? 'none'} API ${z?.length ?? 'none'}`);
    }
  }
  // Every version stored is some writer's whole records (an append merged with another writer's
  // text, a truncate, a save of a shared working copy must never store part of a record).
  host.stdin!.write(JSON.stringify({ id: -3, op: 'versions' }) + '\n');
  const versions = (JSON.parse((await lines.next()).value as string) as { result: { path: string | null; content: string | null; operation: string; createdBy: { sessionId?: string } }[] }).result;
  for (const v of versions) {
    if (v.content === null || v.content === '' || v.path === null) continue;
    if (!wholeRecords(v.content)) problems.push(`seed ${seed}: a stored version is not whole records: ${v.operation} ${v.path} by ${v.createdBy.sessionId ?? 'the API'}: ${JSON.stringify(v.content.slice(0, 120))}`);
  }
  if (modes[0] !== modes[1]) problems.push(`seed ${seed}: the mounts show different modes: ${modes[0]} ${modes[1]}`);
  for (const w of walked) for (const [p, f] of Object.entries(w)) if (f.bad) problems.push(`seed ${seed}: ${p} is not whole records (${f.bad})`);
  host.kill('SIGTERM');
  await new Promise((ok) => host.once('exit', ok));
  for (const m of [a, b]) if (readFileSync('/proc/mounts', 'utf8').includes(m)) await output('fusermount3', ['-uz', m], dir);
  rmSync(dir, { recursive: true, force: true });
}
console.log(problems.length === 0 ? `${seeds} seeds: nothing found` : `problems:\n${problems.join('\n')}`);
process.exitCode = problems.length === 0 ? 0 : 1;

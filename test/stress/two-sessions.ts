/**
 * @module Stress run (not part of the suite): two sessions' mounts of one store, each driven by a
 * python process running seeded random operations on the same few names (writes, appends with
 * O_CREAT, renames, unlinks, atomic replaces, reads, stats, read-write opens, truncates), then a
 * tally of what each answered. An answer no disk would give for that race is listed as unexpected:
 * anything but ENOENT from an operation on a name the other session may just have removed, and
 * for creating opens anything but ENOENT below a directory the other session may have emptied
 * (ESTALE, counted apart too, is one of those since fs/reopens.ts). It found the borrowed open's
 * ENOENT (fuse-native.c, fuse_native_create_or_open). Child processes only.
 * `node dist/test/stress/two-sessions.js [seeds] [ops per session]`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { output } from './child.js';

const [seeds = 4, ops = 3000] = process.argv.slice(2).map(Number);
const HOST = new URL('../helpers/mount-host.js', import.meta.url).pathname;

const SESSION = String.raw`
import errno, json, os, random, sys
os.chdir(sys.argv[1]); rnd = random.Random(int(sys.argv[2])); count = int(sys.argv[3])
names = ['a.md', 'b.md', 'c.md', 'd/e.md', 'd/f.md']
tally = {}
for i in range(count):
    p, q = rnd.choice(names), rnd.choice(names)
    k = rnd.choice(['write', 'append', 'rename', 'unlink', 'replace', 'read', 'stat', 'rw', 'trunc'])
    step = ''
    try:
        if k == 'write':
            os.makedirs(os.path.dirname(p) or '.', exist_ok=True)
            with open(p, 'w') as f: f.write('w%d %s\n' % (i, 'x' * rnd.randrange(200)))
        elif k == 'append':
            step = ':open'; fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try: step = ':write'; os.write(fd, b'a\n')
            finally: step = ':close'; os.close(fd)
        elif k == 'rename': os.rename(p, q)
        elif k == 'unlink': os.unlink(p)
        elif k == 'replace':
            t = '%s.%d.tmp' % (p, os.getpid())
            with open(t, 'w') as f: f.write('r%d\n' % i)
            os.replace(t, p)
        elif k == 'read':
            with open(p) as f: f.read()
        elif k == 'stat': os.stat(p)
        elif k == 'rw':
            with open(p, 'r+') as f: f.read(); f.write('z')
        elif k == 'trunc': os.truncate(p, 3)
        key = k + ':ok'
    except OSError as e:
        key = k + ':' + errno.errorcode[e.errno] + step + (':below' if '/' in p else '')
    tally[key] = tally.get(key, 0) + 1
print(json.dumps(tally, sort_keys=True))
`;

/** What a disk could answer in this race: a name removed by the other session, or its directory emptied. */
function expected(key: string): boolean {
  const [op, answer, ...rest] = key.split(':');
  if (answer === 'ok') return true;
  if (answer !== 'ENOENT') return false;
  if (['read', 'rename', 'rw', 'stat', 'trunc', 'unlink'].includes(op!)) return true;
  return rest.includes('below');
}


const unexpected: Record<string, number> = {};
let estale = 0;
for (let seed = 1; seed <= seeds; seed++) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-two-'));
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  const host = spawn(process.execPath, [HOST, '--db', join(dir, 'db'), '--mount', a, '--session', 'sesn_a', '--also', `${b}=sesn_b`], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  await new Promise<void>((ok) => createInterface({ input: host.stdout! }).once('line', () => ok()));
  const outs = await Promise.all([output('python3', ['-c', SESSION, a, String(seed), String(ops)], a), output('python3', ['-c', SESSION, b, String(seed + 1000), String(ops)], b)]);
  for (const [i, out] of outs.entries()) {
    const tally = JSON.parse(out || '{"no-output:EIO":1}') as Record<string, number>;
    for (const [k, n] of Object.entries(tally)) {
      if (k.split(':')[1] === 'ESTALE') estale += n;
      if (!expected(k)) unexpected[k] = (unexpected[k] ?? 0) + n;
    }
    console.log(`seed ${seed} session ${'ab'[i]}: ${out}`);
  }
  host.kill('SIGTERM');
  await new Promise((ok) => host.once('exit', ok));
  for (const m of [a, b]) if (readFileSync('/proc/mounts', 'utf8').includes(m)) await output('fusermount3', ['-uz', m], dir);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${seeds * ops * 2} operations: ${estale} ESTALE, unexpected ${JSON.stringify(unexpected)}`);

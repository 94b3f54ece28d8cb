/**
 * @module Stress run for issue 12 item 2 (not part of the suite): the sed -i test's pattern, longer
 * and under CPU load, counting what the appends and reads answered. Child processes only: a mount
 * host, a sed loop, python appenders and busy loops. `node dist/test/stress/atomic-saves.js
 * [rounds] [saves] [opens] [busy]`; MNEMO_FUSE_TRACE=<file> also makes the binding log each ESTALE it sends.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { output } from './child.js';

const [rounds = 5, saves = 300, opens = 3000, busy = 2] = process.argv.slice(2).map(Number);
const HOST = new URL('../helpers/mount-host.js', import.meta.url).pathname;


const APPENDER = String.raw`
import errno, json, os, sys
# Python's open(), spelled out so a failure names its syscall.
fails = {}
def count(k):
    fails[k] = fails.get(k, 0) + 1
for i in range(int(sys.argv[1])):
    for mode, flags in (('a', os.O_WRONLY | os.O_CREAT | os.O_APPEND), ('r', os.O_RDONLY)):
        step = 'open'
        try:
            fd = os.open('log.md', flags, 0o666)
            try:
                step = 'fstat'; os.fstat(fd)
                if mode == 'a': step = 'lseek'; os.lseek(fd, 0, os.SEEK_END)
                else: step = 'read'; os.read(fd, 65536)
            finally:
                os.close(fd)
        except OSError as e:
            count(mode + ':' + step + ':' + errno.errorcode[e.errno])
print(json.dumps(fails))
`;

const totals: Record<string, number> = {};
for (let r = 0; r < rounds; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-estale-'));
  const mnt = join(dir, 'mnt');
  const host = spawn(process.execPath, [HOST, '--db', join(dir, 'db'), '--mount', mnt, '--seed', JSON.stringify({ '/log.md': 'start\n' })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((ok) => createInterface({ input: host.stdout }).once('line', () => ok()));
  const burners = Array.from({ length: busy }, () => spawn('bash', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  const [sed, a] = await Promise.all([
    output('bash', ['-c', `for i in $(seq 1 ${saves}); do sed -i "s/^start$/start/" log.md || echo SEDFAIL; done`], mnt),
    output('python3', ['-c', APPENDER, String(opens / 2)], mnt),
  ]);
  for (const b of burners) b.kill('SIGKILL');
  const fails = JSON.parse(a || '{"no-output":1}') as Record<string, number>;
  // A failed sed -i (an atomic save that did not land) counts too.
  const sedFails = sed.split('\n').filter((l) => l === 'SEDFAIL').length;
  if (sedFails > 0) fails['sed -i failed'] = sedFails;
  for (const [k, n] of Object.entries(fails)) totals[k] = (totals[k] ?? 0) + n;
  console.log(`round ${r + 1}: ${opens} opens, ${JSON.stringify(fails)}`);
  host.kill('SIGTERM');
  await new Promise((ok) => host.once('exit', ok));
  if (readFileSync('/proc/mounts', 'utf8').includes(mnt)) await output('fusermount3', ['-uz', mnt], dir);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`total over ${rounds * opens} opens: ${JSON.stringify(totals)}`);
// Anything counted is a failure: say so in the exit status too.
process.exitCode = Object.keys(totals).length > 0 ? 1 : 0;

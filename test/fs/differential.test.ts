/**
 * A seeded random-operation test (JuiceFS fsrand style): the same few thousand file operations run
 * on the mount and on a plain tmpfs directory must give the same outcomes, tree and contents.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, py, startMount } from '../helpers/mount.js';

const SCRIPT = String.raw`
import errno, json, os, random, sys
root, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
os.chdir(root)
dirs = ['a', 'b', 'a/c', 'b/d', 'a/c/e']
names = ['x.md', 'y.md', 'z.txt', 'notes']
def p():
    return rnd.choice(['', *[d + '/' for d in dirs]]) + rnd.choice(names)
def d():
    return rnd.choice(dirs)
def text():
    return ''.join(rnd.choice('abc xyz\n') for _ in range(rnd.randint(0, 200)))
log = []
for i in range(count):
    op = rnd.choice(['write', 'write', 'append', 'truncate', 'rename', 'unlink', 'mkdir', 'rmdir', 'renamedir', 'read', 'pwrite'])
    try:
        if op == 'write':
            with open(p(), 'w') as f: f.write(text())
        elif op == 'append':
            with open(p(), 'a') as f: f.write(text())
        elif op == 'truncate':
            os.truncate(p(), rnd.randint(0, 300))
        elif op == 'pwrite':
            fd = os.open(p(), os.O_RDWR)
            try: os.pwrite(fd, text().encode(), rnd.randint(0, 100))
            finally: os.close(fd)
        elif op == 'rename':
            os.rename(p(), p())
        elif op == 'unlink':
            os.unlink(p())
        elif op == 'mkdir':
            os.mkdir(d())
        elif op == 'rmdir':
            os.rmdir(d())
        elif op == 'renamedir':
            os.rename(d(), d())
        elif op == 'read':
            with open(p()) as f: f.read()
        log.append(op + ' ok')
    except OSError as e:
        log.append(op + ' ' + errno.errorcode.get(e.errno, str(e.errno)))
tree = {}
for top, ds, fs in os.walk('.'):
    for n in ds: tree[os.path.join(top, n) + '/'] = None
    for n in fs: tree[os.path.join(top, n)] = open(os.path.join(top, n), 'rb').read().decode('latin-1')
print(json.dumps({'log': log, 'tree': dict(sorted(tree.items()))}))
`;

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe.skipIf(!FUSE_AVAILABLE)('the mount against tmpfs', () => {
  it.each([1, 2, 3])('seed %i: the same random operations give the same outcomes, tree and contents', async (seed) => {
    const base = existsSync('/dev/shm') ? '/dev/shm' : undefined;
    const plain = mkdtempSync(join(base ?? '/tmp', 'mnemo-diff-'));
    onTestFinished(() => rmSync(plain, { recursive: true, force: true }));
    const m = await startMount();
    const [onMount, onDisk] = await Promise.all([
      py(SCRIPT, m.mnt, [m.mnt, String(seed), '1500']),
      py(SCRIPT, plain, [plain, String(seed), '1500']),
    ]);
    expect(onMount.code, onMount.stderr).toBe(0);
    expect(onDisk.code, onDisk.stderr).toBe(0);
    const a = JSON.parse(onMount.stdout) as { log: string[]; tree: Record<string, string | null> };
    const b = JSON.parse(onDisk.stdout) as { log: string[]; tree: Record<string, string | null> };
    const firstDiff = a.log.findIndex((line, i) => line !== b.log[i]);
    expect(firstDiff, `op ${firstDiff}: mount "${a.log[firstDiff]}" vs disk "${b.log[firstDiff]}"`).toBe(-1);
    expect(a.tree).toEqual(b.tree);
    const files = Object.entries(a.tree).filter(([, v]) => v !== null);
    const stored = await m.tree();
    expect(Object.keys(stored).sort()).toEqual(files.map(([k]) => k.slice(1)).sort());
  });
});

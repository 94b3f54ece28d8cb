/**
 * Limits on a live mount (issue 11, item 5), through the real server with small limits set in its
 * environment and python child processes writing into session mounts:
 * - mount-local state (`.git/` files, temp-looking drafts) is capped per mount, per workspace (half
 *   of the server's cap) and per server:
 *   past a cap a write fails with ENOSPC, nothing of the refused file is kept, and deleting or
 *   truncating local files, or ending a session, gives the bytes back;
 * - store limits refuse a save through the mount with ENOSPC;
 * - active sessions per workspace are capped (413 naming the limit), and so are the stores they
 *   mount together (each a FUSE mount).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { eventually, FUSE_AVAILABLE, py } from '../helpers/mount.js';
import { createWorkspace, jsonRequest, rawRequest, sdkClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const KiB = 1024;

async function serverWith(env: Record<string, string>): Promise<RunningServer> {
  const server = await startServer({ env });
  onTestFinished(() => server.stop());
  return server;
}

async function sessionOn(server: RunningServer, storeId: string, headers: Record<string, string> = {}): Promise<{ id: string; dir: string }> {
  const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
    apiKey: server.adminKey,
    headers,
    body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: storeId }] }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const s = res.body as { id: string; resources: { host_path: string }[] };
  return { id: s.id, dir: s.resources[0]!.host_path };
}

/** A new workspace (null: the default one), a store in it and a session on that store, made with the operator key. */
async function sessionInWorkspace(server: RunningServer, name: string, workspace: 'new' | Record<string, string> | null) {
  const post = (path: string, body: object, headers: Record<string, string> = {}) => jsonRequest(server, 'POST', path, server.adminKey, body, headers);
  const headers: Record<string, string> = workspace === null ? {}
    : workspace === 'new' ? { 'anthropic-workspace-id': (await createWorkspace(server, name)).id }
    : workspace;
  const store = await post('/v1/memory_stores', { name }, headers);
  expect(store.status, JSON.stringify(store.body)).toBe(200);
  return { ...(await sessionOn(server, (store.body as { id: string }).id, headers)), headers };
}

/**
 * Python that writes files of `size` bytes named by `names` (one open/write/close each) and prints
 * a JSON list: "ok", or the errno name that stopped that file, plus whether the refused file was
 * left behind (it must not be, once its close is done).
 */
const WRITER = `
import errno, json, os, sys, time
size = int(sys.argv[1]); out = []
for name in sys.argv[2:]:
    os.makedirs(os.path.dirname(name) or '.', exist_ok=True)
    try:
        with open(name, 'wb') as f:
            f.write(b'x' * size)
        out.append('ok')
    except OSError as e:
        # release follows close asynchronously: give it a moment before looking
        for _ in range(50):
            if not os.path.exists(name): break
            time.sleep(0.02)
        out.append(errno.errorcode[e.errno] + (' kept' if os.path.exists(name) else ''))
print(json.dumps(out))
`;

async function write(dir: string, size: number, names: string[]): Promise<string[]> {
  const r = await py(WRITER, dir, [String(size), ...names]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as string[];
}

const objects = (from: number, n: number) => Array.from({ length: n }, (_, i) => `.git/objects/${String(from + i).padStart(2, '0')}`);

describe.skipIf(!FUSE_AVAILABLE)('mount-local caps', () => {
  it('files under .git/ past MNEMO_MOUNT_LOCAL_MAX_BYTES fail with ENOSPC, keep nothing of the refused file, and deletes give the bytes back', async () => {
    const server = await serverWith({ MNEMO_MOUNT_LOCAL_MAX_BYTES: String(1024 * KiB) });
    const store = await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'git' });
    const { dir } = await sessionOn(server, store.id);
    // Ten 100 KiB objects fit in 1 MiB; the eleventh does not.
    expect(await write(dir, 100 * KiB, objects(0, 12))).toEqual([...Array(10).fill('ok'), 'ENOSPC', 'ENOSPC']);
    // Deleting two frees room for two more, and no more than that.
    const rm = await py(`import os\nos.remove('.git/objects/00')\nos.remove('.git/objects/01')`, dir);
    expect(rm.code, rm.stderr).toBe(0);
    expect(await write(dir, 100 * KiB, objects(20, 3))).toEqual(['ok', 'ok', 'ENOSPC']);
    // Truncating one gives its bytes back too.
    const tr = await py(`import os\nos.truncate('.git/objects/02', 0)`, dir);
    expect(tr.code, tr.stderr).toBe(0);
    expect(await write(dir, 100 * KiB, objects(30, 2))).toEqual(['ok', 'ENOSPC']);
    // Temp-looking drafts kept until a rename count as well, and so does a file's unsaved working
    // copy while it is written: with the mount full, a new ordinary file is refused too.
    expect(await write(dir, 100 * KiB, ['sedAbC123', 'refused.md'])).toEqual(['ENOSPC', 'ENOSPC']);
    const rm3 = await py(`import os\nfor n in ('03', '04', '05'): os.remove('.git/objects/' + n)`, dir);
    expect(rm3.code, rm3.stderr).toBe(0);
    // Once saved, a file is a stored version and holds nothing local: the room is there again.
    expect(await write(dir, 100 * KiB, ['notes.md', 'more.md'])).toEqual(['ok', 'ok']);
    expect(await write(dir, 100 * KiB, objects(40, 4))).toEqual(['ok', 'ok', 'ok', 'ENOSPC']);
    await eventually(async () => expect(server.stderr()).toContain('MNEMO_MOUNT_LOCAL_MAX_BYTES=1048576'));
  });

  it('all mounts together are capped by MNEMO_LOCAL_MAX_BYTES, and ending a session gives its bytes back', async () => {
    const server = await serverWith({ MNEMO_MOUNT_LOCAL_MAX_BYTES: String(1024 * KiB), MNEMO_LOCAL_MAX_BYTES: String(1536 * KiB) });
    // Three workspaces: each may hold half of the server's 1,536 KiB (768 KiB, seven objects).
    const a = await sessionInWorkspace(server, 'a', null);
    const b = await sessionInWorkspace(server, 'b', 'new');
    const c = await sessionInWorkspace(server, 'c', 'new');
    expect(await write(a.dir, 100 * KiB, objects(0, 7))).toEqual(Array(7).fill('ok'));
    expect(await write(b.dir, 100 * KiB, objects(0, 7))).toEqual(Array(7).fill('ok'));
    // 1,400 KiB are held by a and b: c has 136 KiB of the server's 1,536 left, one object.
    expect(await write(c.dir, 100 * KiB, objects(0, 2))).toEqual(['ok', 'ENOSPC']);
    await eventually(async () => expect(server.stderr()).toContain('over MNEMO_LOCAL_MAX_BYTES=1572864'));
    const ended = await rawRequest(server.url, 'DELETE', `/v1/sessions/${a.id}`, { apiKey: server.adminKey });
    expect(ended.status).toBe(200);
    // a's 700 KiB are back: c now stops at its workspace's share (seven objects in all).
    expect(await write(c.dir, 100 * KiB, objects(10, 7))).toEqual([...Array(6).fill('ok'), 'ENOSPC']);
  });

  it('one workspace\'s mounts hold at most half of MNEMO_LOCAL_MAX_BYTES, so another workspace\'s mount still saves', async () => {
    const server = await serverWith({ MNEMO_MOUNT_LOCAL_MAX_BYTES: String(1024 * KiB), MNEMO_LOCAL_MAX_BYTES: String(2048 * KiB) });
    // The tester's attack: one tenant parks .git/ files in two mounts of its own.
    const first = await sessionInWorkspace(server, 'greedy', 'new');
    const second = await sessionInWorkspace(server, 'greedy 2', first.headers);
    expect(await write(first.dir, 100 * KiB, objects(0, 10))).toEqual(Array(10).fill('ok'));
    // Its share is 1,024 KiB, 1,000 of them held already: its second mount gets none.
    expect(await write(second.dir, 100 * KiB, objects(0, 10))).toEqual(Array(10).fill('ENOSPC'));
    await eventually(async () => expect(server.stderr()).toContain('over its share, half of MNEMO_LOCAL_MAX_BYTES=2097152'));
    // Another workspace's agent saves ordinary files, and keeps room for its own .git/.
    const victim = await sessionInWorkspace(server, 'victim', null);
    expect(await write(victim.dir, 50 * KiB, ['notes.md', 'plan.md'])).toEqual(['ok', 'ok']);
    expect(await write(victim.dir, 100 * KiB, objects(0, 10))).toEqual(Array(10).fill('ok'));
  });
});

describe.skipIf(!FUSE_AVAILABLE)('store limits on a mount', () => {
  it('a save past MNEMO_STORE_MAX_MEMORIES or MNEMO_STORE_MAX_BYTES fails with ENOSPC and stores nothing', async () => {
    const server = await serverWith({ MNEMO_STORE_MAX_MEMORIES: '3', MNEMO_STORE_MAX_BYTES: String(10 * KiB) });
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'full' });
    const { dir } = await sessionOn(server, store.id);
    expect(await write(dir, 100, ['a.md', 'b.md', 'c.md', 'd.md'])).toEqual(['ok', 'ok', 'ok', 'ENOSPC']);
    // Rewriting a stored file past the byte limit fails too; the file keeps its stored content.
    expect(await write(dir, 10 * KiB, ['a.md'])).toEqual(['ENOSPC kept']);
    const listed = (await client.beta.memoryStores.memories.list(store.id)).data;
    expect(listed.map((m) => [m.path, (m as { content_size_bytes?: number }).content_size_bytes])).toEqual([['/a.md', 100], ['/b.md', 100], ['/c.md', 100]]);
    await eventually(async () => expect(server.stderr()).toMatch(new RegExp(`mnemo: warn: save of ${store.id}/d\\.md failed: ENOSPC.*MNEMO_STORE_MAX_MEMORIES=3`)));
  });

  it('df shows the store\'s limits as the file system\'s size and what it holds as used, so a full store shows no room', async () => {
    const server = await serverWith({ MNEMO_STORE_MAX_MEMORIES: '3', MNEMO_STORE_MAX_BYTES: String(40 * KiB) });
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'df' });
    const { dir } = await sessionOn(server, store.id);
    const statfs = async () => {
      const r = await py("import os, json\ns = os.statvfs('.')\nprint(json.dumps([s.f_bsize, s.f_blocks, s.f_bavail, s.f_files, s.f_favail]))", dir);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as number[];
    };
    expect(await statfs()).toEqual([4096, 10, 10, 3, 3]);
    expect(await write(dir, 8 * KiB, ['a.md', 'b.md'])).toEqual(['ok', 'ok']);
    expect(await statfs()).toEqual([4096, 10, 6, 3, 1]);
    expect(await write(dir, 100, ['c.md'])).toEqual(['ok']);
    expect(await statfs()).toEqual([4096, 10, 5, 3, 0]);
  });

  it('a temp file whose atomic rename was refused with ENOSPC stays a temp file: left in place, it is saved under its own name 2 s later', async () => {
    const server = await serverWith({ MNEMO_STORE_MAX_BYTES: '1000' });
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'refused rename' });
    const { dir } = await sessionOn(server, store.id);
    const r = await py(
      `import os, tempfile
open('c.md', 'w').write('c' * 949 + '\\n')
with tempfile.NamedTemporaryFile('w', dir='.', delete=False) as f:
    f.write('t' * 99 + '\\n')
try:
    os.replace(f.name, 'd.md')
except OSError as e:
    print(os.strerror(e.errno))
os.remove('c.md')
print(os.path.basename(f.name))`,
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const [refusal, temp] = r.stdout.trim().split('\n');
    expect(refusal).toBe('No space left on device');
    await eventually(async () => {
      const listed = (await client.beta.memoryStores.memories.list(store.id)).data;
      expect(listed.map((m) => (m as { path: string }).path)).toEqual([`/${temp}`]);
    });
  });

  it('a session past MNEMO_WORKSPACE_MAX_SESSIONS is refused with 413 naming the limit, and ending one makes room', async () => {
    const server = await serverWith({ MNEMO_WORKSPACE_MAX_SESSIONS: '2' });
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'sessions' });
    const first = await sessionOn(server, store.id);
    await sessionOn(server, store.id);
    const refused = await rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id }] }),
    });
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'request_too_large', message: expect.stringContaining('MNEMO_WORKSPACE_MAX_SESSIONS=2') } });
    await rawRequest(server.url, 'DELETE', `/v1/sessions/${first.id}`, { apiKey: server.adminKey });
    await sessionOn(server, store.id);
  });

  it('a session that would take the stores a workspace\'s active sessions mount past MNEMO_WORKSPACE_MAX_MOUNTS is refused with 413 naming the limit, and ending one makes room', async () => {
    const server = await serverWith({ MNEMO_WORKSPACE_MAX_MOUNTS: '3' });
    const client = sdkClient(server.url, server.adminKey);
    const [a, b, c] = [await client.beta.memoryStores.create({ name: 'a' }), await client.beta.memoryStores.create({ name: 'b' }), await client.beta.memoryStores.create({ name: 'c' })];
    const open = (...stores: { id: string }[]) => rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: stores.map((s) => ({ type: 'memory_store', memory_store_id: s.id, access: 'read_only' })) }),
    });
    const first = await open(a, b);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const refused = await open(a, c);
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'request_too_large', message: expect.stringContaining('MNEMO_WORKSPACE_MAX_MOUNTS=3') } });
    expect((await open(c)).status).toBe(200);
    expect((await open(a)).status).toBe(413);
    await rawRequest(server.url, 'DELETE', `/v1/sessions/${(first.body as { id: string }).id}`, { apiKey: server.adminKey });
    expect((await open(a, c)).status).toBe(200);
  });
});

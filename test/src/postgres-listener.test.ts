/**
 * The cross-host wake-up on PostgreSQL (issue 14): two storages on one database stand for two
 * servers. A commit through one is heard by the other's listener (its change mark moves, its
 * handler learns the store), never by itself; a rolled-back write publishes nothing; an ended
 * session is announced; and a listener whose connection is cut comes back and says "resync".
 */
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { MnemoError } from '../../src/domain/errors.js';
import type { Caller, ChangePage, Session } from '../../src/domain/types.js';
import { NO_MOUNTS, type Mounter } from '../../src/service/mounts.js';
import { createService, type Service } from '../../src/service/service.js';
import { LISTENER_APPLICATION_NAME } from '../../src/storage/postgres/listener.js';
import { openPostgresStorage, type PostgresStorage } from '../../src/storage/postgres/open.js';
import { codeOf } from '../helpers/core.js';
import { sha256Hex } from '../../src/domain/content.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';

interface Host {
  storage: PostgresStorage;
  service: Service;
  caller: Caller;
  heard: { changes: (string | null)[]; ended: string[]; resyncs: number };
  /** What the host's mounter was told: redactions (store, version, erased sha) and missed notices. */
  mounts: { redacted: [string, string, string | null][]; missed: number };
}

async function twoHosts(): Promise<[Host, Host, string]> {
  const db = await createDatabase();
  const hosts: Host[] = [];
  for (let i = 0; i < 2; i++) {
    // Keys are kept for an hour: only a revoke's notice makes a server look one up again.
    const storage = await openPostgresStorage(db.url, { keyCacheMs: 3_600_000 });
    const mounts = { redacted: [] as [string, string, string | null][], missed: 0 };
    const mounter: Mounter = {
      ...NO_MOUNTS,
      versionRedacted: (storeId, versionId, sha) => void mounts.redacted.push([storeId, versionId, sha]),
      redactionsMissed: () => void (mounts.missed += 1),
    };
    // The feed's followers never poll here: they wake only when told (a commit here or a notice heard).
    const service = createService({ storage, mounter, feed: { every: () => () => {} } });
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey(`host ${i}`, 'admin', ws.id);
    const heard = { changes: [] as (string | null)[], ended: [] as string[], resyncs: 0 };
    await storage.listen({
      change: (id) => {
        heard.changes.push(id);
        service.outsideCommit(id);
      },
      // As main.ts wires them.
      versionRedacted: (storeId, versionId, sha) => service.outsideRedaction(storeId, versionId, sha),
      sessionEnded: (_ws, id) => heard.ended.push(id),
      resync: () => {
        heard.resyncs += 1;
        service.outsideResync();
      },
    });
    hosts.push({ storage, service, caller: { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } }, heard, mounts });
  }
  onTestFinished(async () => {
    for (const h of hosts) await h.storage.close();
    await db.drop();
  });
  return [hosts[0]!, hosts[1]!, db.url];
}

/** Polls `ok` until it holds or the deadline passes (a deadline, not a timing assertion). */
async function eventually(ok: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(pgSkip !== null)(`the PostgreSQL change listener${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it("a commit on one server moves the other's change mark and names the store there, and a server does not hear itself", async () => {
    const [a, b] = await twoHosts();
    const store = await b.service.createStore(b.caller, { name: 'shared', description: '', metadata: {} });
    const markA = a.storage.changeMark();
    const ownA = a.storage.ownWriteMark();
    const heardByB = b.heard.changes.length;
    await b.service.createMemory(b.caller, store.id, { path: '/a.md', content: 'from b' });
    await eventually(() => a.heard.changes.includes(store.id), 'host A hears the store of B\'s commit');
    expect(a.storage.changeMark()).toBeGreaterThan(markA);
    expect(a.storage.ownWriteMark()).toBe(ownA);
    expect(b.heard.changes.length).toBe(heardByB);

    // A's own write moves both of its marks by the same amount (its mount keeps its answers), and B hears it.
    const before = { mark: a.storage.changeMark(), own: a.storage.ownWriteMark() };
    const seen = b.heard.changes.length;
    await a.service.createMemory(a.caller, store.id, { path: '/b.md', content: 'from a' });
    expect(a.storage.changeMark() - before.mark).toBe(a.storage.ownWriteMark() - before.own);
    await eventually(() => b.heard.changes.length > seen, 'host B hears A\'s commit');
  });

  it("another server's commit in one store moves that store's mark and leaves the other stores' marks, which its store-less writes move", async () => {
    const [a, b] = await twoHosts();
    const busy = await b.service.createStore(b.caller, { name: 'busy', description: '', metadata: {} });
    const quiet = await b.service.createStore(b.caller, { name: 'quiet', description: '', metadata: {} });
    await eventually(() => a.heard.changes.length >= 2, 'A hears the store creations');
    const m = await b.service.createMemory(b.caller, busy.id, { path: '/a.md', content: 'one' });
    await eventually(() => a.heard.changes.includes(busy.id), 'A hears the first write');
    const before = { busy: a.storage.storeChangeMark(busy.id), quiet: a.storage.storeChangeMark(quiet.id), all: a.storage.changeMark() };
    await b.service.updateMemory(b.caller, busy.id, m.id, { content: 'two' });
    await eventually(() => a.storage.storeChangeMark(busy.id) > before.busy, "the busy store's mark moves on A");
    expect(a.storage.storeChangeMark(quiet.id)).toBe(before.quiet);
    expect(a.storage.changeMark()).toBeGreaterThan(before.all);
    // A write that names no store (an archiving) may touch any: every mark moves, also when it
    // shares its transaction with a version of another store (a group commit).
    await b.storage.atomic(async (tx) => {
      const ops = b.service.operationsOn(tx);
      await ops.createMemory(b.caller, busy.id, { path: '/b.md', content: 'beside' });
      await ops.archiveStore(b.caller, quiet.id);
    });
    await eventually(() => a.storage.storeChangeMark(quiet.id) > before.quiet, "the quiet store's mark moves on A");
  });

  it("a change feed follower on one server wakes for another server's commit", async () => {
    const [a, b] = await twoHosts();
    const store = await b.service.createStore(b.caller, { name: 'followed', description: '', metadata: {} });
    await b.service.createMemory(b.caller, store.id, { path: '/e.md', content: 'before' });
    const abort = new AbortController();
    const pages = await a.service.feed.follow(a.caller, store.id, { after: null }, abort.signal);
    // The first page is what was there; the follower then waits, and only a wake-up brings the next.
    expect(((await pages.next()).value as ChangePage).data).toHaveLength(1);
    const next = pages.next();
    await b.service.createMemory(b.caller, store.id, { path: '/f.md', content: 'from b' });
    const page = await next;
    abort.abort();
    await pages.return(undefined);
    expect(page.done).toBe(false);
    const data = (page.value as ChangePage).data;
    expect(data.map((c) => ('version' in c ? c.version.path : null))).toEqual(['/f.md']);
  });

  it('a write that rolls back publishes nothing: its store is not named before the next commit', async () => {
    const [a, b] = await twoHosts();
    const rolled = await b.service.createStore(b.caller, { name: 'rolled back', description: '', metadata: {} });
    const kept = await b.service.createStore(b.caller, { name: 'kept', description: '', metadata: {} });
    await eventually(() => a.heard.changes.length >= 2, 'A hears the two store creations');
    const from = a.heard.changes.length;
    await expect(
      b.storage.atomic(async (tx) => {
        await b.service.operationsOn(tx).createMemory(b.caller, rolled.id, { path: '/x.md', content: 'never' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow();
    await b.service.createMemory(b.caller, kept.id, { path: '/y.md', content: 'kept' });
    await eventually(() => a.heard.changes.slice(from).includes(kept.id), 'A hears the commit');
    // Notices arrive in commit order: the rolled-back version's would have come before this one.
    expect(a.heard.changes.slice(from)).not.toContain(rolled.id);
  });

  it('ending a session on one server is announced to the others', async () => {
    const [a, b] = await twoHosts();
    const session: Session = {
      id: a.service.ids('session'), workspaceId: a.caller.workspaceId, status: 'active', resources: [],
      createdAt: new Date().toISOString(), endedAt: null, nodeId: 'host-a',
    };
    await a.storage.insertSession(session);
    await b.service.sessions.endSession(b.caller, session.id);
    await eventually(() => a.heard.ended.includes(session.id), 'A hears that its session ended');
    expect((await a.storage.getSession(session.workspaceId, session.id))?.status).toBe('ended');
    expect(b.heard.ended).toEqual([]);
  });

  it("a redaction on one server reaches the other's mounts, with the text's sha once no version holds it; a refused one reaches nobody", async () => {
    const [a, b] = await twoHosts();
    const store = await b.service.createStore(b.caller, { name: 'secrets', description: '', metadata: {} });
    const gone = await b.service.createMemory(b.caller, store.id, { path: '/gone.md', content: 'token=abc' });
    await b.service.updateMemory(b.caller, store.id, gone.id, { content: 'token=(rotated)' });
    // The first text comes back in a later version: still held when the first version goes.
    const held = await b.service.createMemory(b.caller, store.id, { path: '/held.md', content: 'password=hunter2' });
    await b.service.updateMemory(b.caller, store.id, held.id, { content: 'rotated' });
    await b.service.updateMemory(b.caller, store.id, held.id, { content: 'password=hunter2' });

    await b.service.redactVersion(b.caller, store.id, gone.versionId);
    await b.service.redactVersion(b.caller, store.id, held.versionId);
    // Again: nothing changes, nothing is told. The head cannot be redacted: its transaction rolls back.
    await b.service.redactVersion(b.caller, store.id, gone.versionId);
    const head = (await b.service.getMemory(b.caller, store.id, held.id)).versionId;
    expect(await codeOf(() => b.service.redactVersion(b.caller, store.id, head))).toBe('conflict');
    // Notices arrive in commit order: once A hears this commit, it has heard every redaction before it.
    const last = await b.service.createStore(b.caller, { name: 'after', description: '', metadata: {} });
    await b.service.createMemory(b.caller, last.id, { path: '/z.md', content: 'z' });
    await eventually(() => a.heard.changes.includes(last.id), "A hears B's last commit");

    const told = [
      [store.id, gone.versionId, sha256Hex('token=abc')],
      [store.id, held.versionId, null],
    ];
    expect(a.mounts.redacted).toEqual(told);
    // B's own mounts were told by its service, once each, and B does not hear itself.
    expect(b.mounts.redacted).toEqual(told);
  });

  it('a key found on one server is kept there, and a revoke on another server is heard: its next request is refused', async () => {
    const [a, b, url] = await twoHosts();
    const { key, secret } = await b.service.keys.createKey('agent', 'read_write', b.caller.workspaceId);
    // Created on B, it works on A at once (an unknown hash is never kept), and A keeps it.
    expect((await a.service.keys.authenticate(secret)).id).toBe(key.id);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // A key never changes but for its revoke, so A answers from what it kept: a rename behind
      // mnemo's back (no notice) is not seen there, while B, which never found it, reads it.
      await admin.query('UPDATE api_keys SET name = $1 WHERE id = $2', ['renamed behind mnemo', key.id]);
    } finally {
      await admin.end();
    }
    expect((await a.service.keys.authenticate(secret)).name).toBe('agent');
    expect((await b.service.keys.authenticate(secret)).name).toBe('renamed behind mnemo');
    // Revoked on A: refused on A at once, and on B as soon as B hears it.
    await a.service.keys.revokeKey(a.caller, key.id);
    expect(await codeOf(() => a.service.keys.authenticate(secret))).toBe('unauthenticated');
    // Until B hears it, B may still answer from what it kept: each poll either succeeds or is refused.
    const refusedOnB = () => b.service.keys.authenticate(secret).then(() => false, (err: MnemoError) => err.code === 'unauthenticated');
    await eventually(refusedOnB, 'B refuses the key A revoked');
  });

  it("a revoke on another server moves this server's key mark once heard, and only then (its event streams read their key again)", async () => {
    const [a, b] = await twoHosts();
    const { key } = await b.service.keys.createKey('stream', 'read_only', b.caller.workspaceId);
    const mark = a.storage.keyMark();
    await b.service.createStore(b.caller, { name: 'not a revoke', description: '', metadata: {} });
    await eventually(() => a.heard.changes.length > 0, 'A hears the commit');
    expect(a.storage.keyMark()).toBe(mark);
    await b.service.keys.revokeKey(b.caller, key.id);
    await eventually(() => a.storage.keyMark() !== mark, "A's key mark moves");
  });

  it('a listener whose connection is cut reconnects, says everything may have changed, and hears commits again', async () => {
    const [a, b, url] = await twoHosts();
    const resyncs = a.heard.resyncs + b.heard.resyncs;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Both listeners are cut (one per storage; they look alike in pg_stat_activity).
      const cut = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [LISTENER_APPLICATION_NAME]);
      expect(cut.rowCount).toBe(2);
    } finally {
      await admin.end();
    }
    await eventually(() => a.heard.resyncs + b.heard.resyncs >= resyncs + 2, 'both listeners reconnect and resync');
    // A redaction sent while a listener was away is lost: each server's mounts dropped every kept text.
    expect(a.mounts.missed + b.mounts.missed).toBe(a.heard.resyncs + b.heard.resyncs);
    const store = await b.service.createStore(b.caller, { name: 'after the cut', description: '', metadata: {} });
    const mark = a.storage.changeMark();
    await b.service.createMemory(b.caller, store.id, { path: '/z.md', content: 'again' });
    await eventually(() => a.heard.changes.includes(store.id) && a.storage.changeMark() > mark, 'A hears commits again');
  });
});

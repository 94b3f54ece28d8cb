/**
 * The PostgreSQL adapter when the database cannot be reached (postgres/unavailable.ts): on its
 * own throwaway cluster (pg-cluster.ts), which it stops and starts, every kind of operation fails
 * as MnemoError `unavailable` and works again once PostgreSQL is back on the same pool; a
 * connection that dies inside a transaction fails only that operation; a database that never
 * answers fails within the connect timeout; and what is not about reaching the database (a
 * database that does not exist) is not called unavailable.
 */
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MnemoError } from '../../../src/domain/errors.js';
import { newId } from '../../../src/service/ids.js';
import { openPostgresStorage, type PostgresStorage } from '../../../src/storage/postgres/open.js';
import { clusterUnavailable, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { withDatabase } from '../../helpers/postgres.js';
import type { Store } from '../../../src/domain/types.js';
import type { WriteFound } from '../../../src/storage/port.js';

const skip = clusterUnavailable();
if (skip !== null && process.env['CI']) throw new Error(`the PostgreSQL outage tests cannot run in CI: ${skip}`);

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => {
      throw new Error(`expected a failure, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}

function expectUnavailable(err: unknown): void {
  expect(err).toBeInstanceOf(MnemoError);
  expect(err).toMatchObject({ code: 'unavailable', message: 'database unavailable' });
}

describe.skipIf(skip !== null)(`the PostgreSQL adapter while the database is unreachable${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let cluster: Cluster;
  let storage: PostgresStorage;
  const lines: string[] = [];
  const workspace = { id: newId('workspace'), name: 'default', createdAt: '2026-03-01T00:00:00.000Z' };

  beforeAll(async () => {
    cluster = await startCluster({ tcp: true });
    storage = await openPostgresStorage(cluster.url, { log: (line) => lines.push(line) });
    await storage.insertWorkspace(workspace, false);
  });
  afterAll(async () => {
    await storage?.close();
    cluster?.remove();
  });

  it('fails reads, writes and transactions as unavailable while PostgreSQL is stopped, and serves them again on the same pool once it is back', async () => {
    cluster.stop('fast');
    try {
      expectUnavailable(await failure(storage.listWorkspaces()));
      expectUnavailable(await failure(storage.insertWorkspace({ ...workspace, id: newId('workspace') }, false)));
      expectUnavailable(await failure(storage.atomic(async (tx) => tx.getWorkspace(workspace.id))));
    } finally {
      cluster.start();
    }
    expect(await storage.getWorkspace(workspace.id)).toEqual(workspace);
    const later = { ...workspace, id: newId('workspace'), name: 'later' };
    await storage.atomic(async (tx) => tx.insertWorkspace(later, false));
    expect((await storage.listWorkspaces()).map((w) => w.id)).toContain(later.id);
    // One line when it went, one when it came back: not one per failed operation.
    expect(lines.filter((l) => l.includes('PostgreSQL is unavailable'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('PostgreSQL answers again'))).toHaveLength(1);
  });

  it('fails a transaction whose connection dies in its middle as unavailable, commits none of it, and keeps the process running', async () => {
    const lost = { ...workspace, id: newId('workspace'), name: 'lost' };
    const err = await failure(
      storage.atomic(async (tx) => {
        await tx.insertWorkspace(lost, false);
        // Ends every session (57P01) while this transaction holds its connection between statements.
        cluster.stop('fast');
        return tx.getWorkspace(lost.id);
      }),
    );
    cluster.start();
    expectUnavailable(err);
    expect(await storage.getWorkspace(lost.id)).toBeNull();
    expect(await storage.getWorkspace(workspace.id)).toEqual(workspace);
  });

  it('does not call a database that does not exist unavailable: retrying would not help', async () => {
    const err = await failure(openPostgresStorage(withDatabase(cluster.url, 'no_such_database')));
    expect(err).not.toBeInstanceOf(MnemoError);
    expect(err).toMatchObject({ code: '3D000' });
  });

  describe('a write waiting on a lock past its limits', () => {
    // Short limits, PostgreSQL's below the client's, as the defaults (db.ts TIMEOUTS) are.
    const timeouts = { statementMs: 1_000, queryMs: 3_000 };

    it('fails a create that waited on its store\'s lock as unavailable, and PostgreSQL never commits it after the lock is released', async () => {
      // Over TCP, as across hosts: a backend hears the client left only when it writes twice.
      const short = await openPostgresStorage(cluster.tcpUrl!, { timeouts });
      const locker = new pg.Client({ connectionString: cluster.url });
      await locker.connect();
      try {
        const at = '2026-03-01T00:00:00.000Z';
        const store: Store = { id: newId('store'), workspaceId: workspace.id, name: 'locked', description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
        await short.insertStore(store);
        // The service's admission on usage alone: the create goes out as one guarded statement
        // with its COMMIT in the same write (db.ts), the case a client-side limit cannot stop.
        const admission = { workspaceId: workspace.id, admit: (_: WriteFound) => {}, clearBelow: () => ({ memories: 100, bytes: 1_000_000 }) };
        await locker.query('BEGIN');
        await locker.query('SELECT id FROM stores WHERE id = $1 FOR UPDATE', [store.id]);
        const stamp = { actor: { type: 'api_actor' as const, apiKeyId: newId('apiKey') }, now: at, versionId: newId('version') };
        const create = short.atomic((tx) => tx.createMemory({ ...stamp, admission, storeId: store.id, memoryId: newId('memory'), path: '/ghost.md', content: 'ghost\n' }));
        expectUnavailable(await failure(create));
        await locker.query('COMMIT');
        // Whatever was left waiting on the lock has run by now (nothing waits on a lock any more).
        for (;;) {
          const waiting = await locker.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted");
          if (waiting.rows[0].n === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await new Promise((r) => setTimeout(r, 500));
        const stored = await locker.query('SELECT count(*)::int AS n FROM memories WHERE store_id = $1', [store.id]);
        expect(stored.rows[0].n).toBe(0);
        expect((await short.listVersions(store.id, { memoryId: null, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null, createdGte: null, createdLte: null, limit: 10, page: null, view: 'basic' })).data).toEqual([]);
      } finally {
        await locker.end();
        await short.close();
      }
    });
  });

  describe('a server that accepts connections and never answers', () => {
    let silent: Server;
    const sockets: Socket[] = [];
    let port = 0;
    beforeAll(async () => {
      silent = createServer((s) => void sockets.push(s));
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      port = (silent.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    });

    it('fails the open as unavailable once the connect timeout passes, instead of hanging', async () => {
      expectUnavailable(await failure(openPostgresStorage(`postgres://postgres@127.0.0.1:${port}/mnemo`)));
    });
  });
});

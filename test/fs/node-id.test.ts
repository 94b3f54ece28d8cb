/**
 * Node ids (issue 14): a session records the node (MNEMO_NODE_ID / --node-id) whose server made
 * it and reports it as `node_id`; on start a server on PostgreSQL remounts only its own node's
 * sessions, so a server under another node id on the same database leaves them to their node. On
 * SQLite the server is the only one on its data directory: it adopts another node's sessions.
 */
import { existsSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mountedPaths } from '../helpers/mount.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { makeTempDir, startServer } from '../helpers/server.js';

const fuseAvailable = existsSync('/dev/fuse');

interface WireSession {
  id: string;
  status: string;
  node_id: string | null;
  resources: { host_path: string }[];
}

describe.skipIf(!fuseAvailable)('node ids', () => {
  it.skipIf(pgSkip !== null)('a session reports its node, and a server on PostgreSQL under another node id does not remount it while its own node does', async () => {
    const dataDir = makeTempDir('mnemo-node-');
    const db = await createDatabase();
    const databaseUrl = db.url;
    let server = await startServer({ dataDir, databaseUrl, args: ['--node-id', 'host-a'] });
    const adminKey = server.adminKey;
    try {
      const store = await sdkClient(server.url, adminKey).beta.memoryStores.create({ name: 'shared' });
      const created = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
      });
      expect(created.status).toBe(200);
      const session = created.body as WireSession;
      expect(session.node_id).toBe('host-a');
      const dir = session.resources[0]!.host_path;
      expect(mountedPaths()).toContain(dir);
      await server.stop();

      server = await startServer({ dataDir, databaseUrl, env: { MNEMO_ADMIN_KEY: adminKey, MNEMO_NODE_ID: 'host-b' } });
      expect(mountedPaths()).not.toContain(dir);
      const seen = (await rawRequest(server.url, 'GET', `/v1/sessions/${session.id}`, { apiKey: adminKey })).body as WireSession;
      expect(seen).toMatchObject({ status: 'active', node_id: 'host-a' });
      await server.stop();

      server = await startServer({ dataDir, databaseUrl, env: { MNEMO_ADMIN_KEY: adminKey, MNEMO_NODE_ID: 'host-a' } });
      expect(mountedPaths()).toContain(dir);
    } finally {
      await server.stop();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a server on SQLite started under another node id (a new hostname, a re-created container) remounts the sessions, takes them as its node and says so once', async () => {
    const dataDir = makeTempDir('mnemo-node-');
    let server = await startServer({ dataDir, args: ['--node-id', 'host-a'] });
    const adminKey = server.adminKey;
    try {
      const store = await sdkClient(server.url, adminKey).beta.memoryStores.create({ name: 'renamed host' });
      const created = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
      });
      const session = created.body as WireSession;
      const dir = session.resources[0]!.host_path;
      await server.stop();

      server = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: adminKey, MNEMO_NODE_ID: 'container-2f3a' }, args: ['--log-level', 'warn'] });
      expect(mountedPaths()).toContain(dir);
      const seen = (await rawRequest(server.url, 'GET', `/v1/sessions/${session.id}`, { apiKey: adminKey })).body as WireSession;
      expect(seen).toMatchObject({ status: 'active', node_id: 'container-2f3a', resources: [{ host_path: dir }] });
      expect((await rawRequest(server.url, 'GET', '/readyz')).status).toBe(200);
      const lines = server.stderr().split('\n').filter((l) => l.includes(session.id));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('"level":"warn"');
      expect(lines[0]).toContain(`mnemo: warn: session ${session.id} was recorded by node host-a; this server is the only one on its database and mounts it now, as node container-2f3a`);
      await server.stop();

      server = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: adminKey, MNEMO_NODE_ID: 'container-2f3a' }, args: ['--log-level', 'warn'] });
      expect(mountedPaths()).toContain(dir);
      expect(server.stderr()).not.toContain(session.id);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

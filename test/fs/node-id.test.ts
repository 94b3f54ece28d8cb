/**
 * Node ids (issue 14): a session records the node (MNEMO_NODE_ID / --node-id) whose server made
 * it and reports it as `node_id`. On PostgreSQL a server remounts only its own node's sessions
 * (fs/multi-host.test.ts); on SQLite the one server of the data dir serves them all, so a restart
 * under another node id (a container re-created under a new hostname) mounts them again (item 10).
 */
import { existsSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mountedPaths } from '../helpers/mount.js';
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
  it('a session reports its node, and on SQLite a server restarted under another node id mounts it again and is ready', async () => {
    const dataDir = makeTempDir('mnemo-node-');
    let server = await startServer({ dataDir, args: ['--node-id', 'host-a'] });
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

      server = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: adminKey, MNEMO_NODE_ID: 'host-b' } });
      expect(mountedPaths()).toContain(dir);
      const seen = (await rawRequest(server.url, 'GET', `/v1/sessions/${session.id}`, { apiKey: adminKey })).body as WireSession;
      expect(seen).toMatchObject({ status: 'active', node_id: 'host-a' });
      const ready = await rawRequest(server.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ active_sessions: 1, mounts: 1 });
      await server.stop();
      expect(mountedPaths()).not.toContain(dir);

      server = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: adminKey, MNEMO_NODE_ID: 'host-a' } });
      expect(mountedPaths()).toContain(dir);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * Deleting a store on PostgreSQL (postgres/schema/v14.ts), through a real server: the store is gone
 * to every reader and writer when the DELETE answers, and the server's upkeep then removes its rows
 * in steps, as on SQLite (test/api/operating.test.ts). Before, the request deleted every row in one
 * transaction: a minute for a store of 1,000,000 versions, against the 60 s statement limit.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRequest } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { eventually } from '../helpers/mount.js';
import { databasePerFile, pgSkip } from '../helpers/postgres.js';

describe.skipIf(pgSkip !== null)(`a deleted store on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const databaseUrl = databasePerFile();
  let server: RunningServer;
  let admin: pg.Pool;

  beforeAll(async () => {
    server = await startServer({ databaseUrl: databaseUrl() });
    admin = new pg.Pool({ connectionString: databaseUrl(), max: 1 });
    admin.on('error', () => {});
  });
  afterAll(async () => {
    await server?.stop();
    await admin?.end();
  });

  it('is gone at once, refuses writes, and the upkeep then removes its rows from the database', async () => {
    const store = (await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'doomed' })).body as { id: string };
    for (let i = 0; i < 30; i++) expect((await jsonRequest(server, 'POST', `/v1/memory_stores/${store.id}/memories`, server.adminKey, { path: `/m${i}.md`, content: `tern ${i}` })).status).toBe(200);
    const rows = async () =>
      (await admin.query('SELECT (SELECT count(*) FROM stores WHERE id = $1) + (SELECT count(*) FROM versions WHERE store_id = $1) AS n', [store.id])).rows[0].n as string;
    expect(Number(await rows())).toBe(31);

    expect((await jsonRequest(server, 'DELETE', `/v1/memory_stores/${store.id}`, server.adminKey)).status).toBe(200);
    expect((await jsonRequest(server, 'GET', `/v1/memory_stores/${store.id}`, server.adminKey)).status).toBe(404);
    expect((await jsonRequest(server, 'POST', `/v1/memory_stores/${store.id}/memories`, server.adminKey, { path: '/late.md', content: 'late' })).status).toBe(404);
    const listed = (await jsonRequest(server, 'GET', '/v1/memory_stores?include_archived=true', server.adminKey)).body as { data: { id: string }[] };
    expect(listed.data.map((s) => s.id)).not.toContain(store.id);

    expect(await eventually(async () => {
      const n = Number(await rows());
      if (n !== 0) throw new Error(`${n} rows left`);
      return n;
    }, 15_000)).toBe(0);
  });
});

/**
 * A server on PostgreSQL sends the reads by key it makes on their own (a retrieve's store and
 * memory, the key behind a request) down one connection, the read lane (src/storage/postgres/
 * read-lane.ts), instead of taking a pooled connection, and waking a backend, for each.
 */
import type Anthropic from '@anthropic-ai/sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_LANE_APPLICATION_NAME } from '../../src/storage/postgres/read-lane.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { sdkClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

describe.skipIf(pgSkip !== null)(`the read lane${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  let db: { url: string; drop: () => Promise<void> };
  let server: RunningServer;
  let client: Anthropic;
  let admin: pg.Client;

  beforeAll(async () => {
    db = await createDatabase();
    server = await startServer({ databaseUrl: db.url });
    client = sdkClient(server.url, server.adminKey);
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    await server?.stop();
    await admin?.end();
    await db?.drop();
  });

  it('carries retrieves made at once on one connection of its own, named in pg_stat_activity', async () => {
    const store = await client.beta.memoryStores.create({ name: 'lane' });
    const made = [];
    for (let i = 0; i < 16; i++) made.push(await client.beta.memoryStores.memories.create(store.id, { path: `/lane/m${i}.md`, content: `text ${i}\n` }));
    const got = await Promise.all(made.map((m) => client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: store.id })));
    expect(got.map((m) => m.content)).toEqual(made.map((_, i) => `text ${i}\n`));
    const lane = (
      await admin.query<{ query: string }>('SELECT query FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [
        READ_LANE_APPLICATION_NAME,
      ])
    ).rows;
    // One backend, and the last statement it ran is a retrieve's: the store and its memory by id.
    expect(lane).toHaveLength(1);
    expect(lane[0]!.query).toMatch(/^SELECT m\.\*\s+FROM \(SELECT \* FROM stores WHERE id = \$1 OFFSET 0\) s LEFT JOIN/s);
  });
});

/**
 * The server's upkeep vacuums after a burst on PostgreSQL (postgres/vacuum.ts, wired in main.ts):
 * once the burst's writes are indexed, the same turns that index and purge call the tidy, which
 * vacuums the tables the burst left with many dead rows and logs it. The tidy itself is tested on
 * the adapter (test/src/storage/postgres.test.ts); this pins that a running server calls it.
 */
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRequest } from '../helpers/sdk.js';
import { makeTempDir, startServer, type RunningServer } from '../helpers/server.js';
import { eventually } from '../helpers/mount.js';
import { databasePerFile, pgSkip } from '../helpers/postgres.js';

describe.skipIf(pgSkip !== null)(`the server's upkeep on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const databaseUrl = databasePerFile();
  let server: RunningServer;
  let admin: pg.Pool;
  // The log goes to a file: the helper keeps only a server's first 64 KiB, and 1,200 requests log more.
  const logDir = makeTempDir('mnemo-vacuum-log-');
  const logFile = join(logDir, 'stderr.log');
  const serverLog = () => readFileSync(logFile, 'utf8');

  beforeAll(async () => {
    const fd = openSync(logFile, 'w');
    try {
      server = await startServer({ databaseUrl: databaseUrl(), stderrFd: fd });
    } finally {
      closeSync(fd);
    }
    admin = new pg.Pool({ connectionString: databaseUrl(), max: 1 });
    admin.on('error', () => {});
  });
  afterAll(async () => {
    await server?.stop();
    await admin?.end();
    rmSync(logDir, { recursive: true, force: true });
  });

  const vacuums = async (table: string) =>
    Number((await admin.query('SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = $1', [table])).rows[0].vacuum_count);

  it('vacuums the memories a burst of writes left dead rows in, and says so in its log', { timeout: 90_000 }, async () => {
    const store = (await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'burst' })).body as { id: string };
    // Autovacuum off for the table: this pins the server's own tidy. When autovacuum's pass came
    // first (its launcher visits each database about once a minute), the tidy found nothing left
    // to vacuum and logged nothing (one fresh-clone CI run in nine).
    await admin.query('ALTER TABLE memories SET (autovacuum_enabled = false)');
    const before = await vacuums('memories');
    // 1,200 new memories: indexing each rewrites its row (its words live in it), 1,200 dead rows.
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; i < 1200; i += 8) {
        const res = await jsonRequest(server, 'POST', `/v1/memory_stores/${store.id}/memories`, server.adminKey, { path: `/burst/${i}.md`, content: `burst note ${i}` });
        expect(res.status).toBe(200);
      }
    });
    await Promise.all(writers);

    // The tidy runs at most every 10 s, and sees the dead rows once the statistics have them (~1 s).
    await eventually(async () => {
      expect(serverLog()).toMatch(/mnemo: vacuumed [^"]*\bmemories\b/);
      expect(await vacuums('memories')).toBeGreaterThan(before);
    }, 60_000);
    // Nothing the burst wrote was lost to it.
    expect(Number((await admin.query('SELECT count(*) AS n FROM memories WHERE store_id = $1', [store.id])).rows[0].n)).toBe(1200);
  });
});

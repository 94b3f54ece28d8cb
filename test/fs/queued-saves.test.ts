/**
 * A mount save that waits for its store's lock behind an API write to the same store: the mount's
 * kept answers (a directory's listing, what is at a path) must show that write once both land. The view kept them
 * across the save when its own-write count moved as much as the change mark, and that count is the
 * whole process's: the API write was taken for part of the save. On PostgreSQL, where the test can
 * hold the store's row lock from its own connection (as another transaction of any writer would),
 * both writes queue in the database in a known order.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { eventually, sh } from '../helpers/mount.js';
import { mountedStore, rawRequest } from '../helpers/sdk.js';
import { startServer } from '../helpers/server.js';

const fuseAvailable = existsSync('/dev/fuse');

describe.skipIf(!fuseAvailable || pgSkip !== null)('a mount save queued behind an API write', () => {
  it('an API write to the same store that lands while a mount save waits for the store is listed and read by that mount afterwards', async () => {
    const db = await createDatabase();
    onTestFinished(() => db.drop());
    const server = await startServer({ databaseUrl: db.url });
    onTestFinished(() => server.stop());
    const { storeId, mnt } = await mountedStore(server, 'queued');
    expect((await sh('printf seen > seen.md', mnt)).code).toBe(0);
    // The mount keeps the root's listing (a readdir asks the mount each time: the kernel keeps no listing).
    expect((await sh('ls', mnt)).stdout).toBe('seen.md\n');

    // Another transaction holds the store's row, as every write to the store takes it first.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    onTestFinished(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM stores WHERE id = $1 FOR NO KEY UPDATE', [storeId]);
    // Asked outside the holder's transaction, which would see one snapshot of the activity throughout.
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    onTestFinished(() => watcher.end());
    const waiting = async (n: number) =>
      eventually(async () => {
        const r = await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        expect(r.rows[0]!.n).toBe(n);
      });

    // First the API write (a new file), then a mount save (another), both waiting for the row in that order.
    const write = rawRequest(server.url, 'POST', `/v1/memory_stores/${storeId}/memories`, {
      apiKey: server.adminKey,
      body: JSON.stringify({ path: '/api.md', content: 'from the API' }),
    });
    await waiting(1);
    const saver = spawn('python3', ['-c', "f = open('saved.md', 'w')\nf.write('saved')\nf.close()\nprint('closed', flush=True)"], { cwd: mnt, stdio: ['ignore', 'pipe', 'inherit'] });
    const saved = new Promise<number | null>((resolve) => saver.once('exit', resolve));
    onTestFinished(() => {
      if (saver.exitCode === null && saver.signalCode === null) process.kill(saver.pid!, 'SIGKILL');
    });
    await waiting(2);
    await holder.query('ROLLBACK');
    expect((await write).status).toBe(200);
    expect(await saved).toBe(0);

    // Both landed, the API write first: the mount lists and reads it, not the listing it kept from before.
    const after = await sh('ls; cat api.md', mnt);
    expect(after.stdout).toBe('api.md\nsaved.md\nseen.md\nfrom the API');
    const versions = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memory_versions`, { apiKey: server.adminKey });
    expect((versions.body as { data: { path: string }[] }).data.map((v) => v.path)).toEqual(['/saved.md', '/api.md', '/seen.md']);
  });
});

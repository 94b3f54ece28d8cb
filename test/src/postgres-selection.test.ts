/**
 * Choosing the engine: MNEMO_DATABASE_URL / --database-url selects PostgreSQL (cli/config.ts),
 * `mnemo backup` and `restore` point at PostgreSQL's own tools for it, and a server whose code is
 * older than the database's schema refuses to start with a clear message.
 */
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/cli/config.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, migrate } from '../../src/storage/postgres/schema/migrations.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { runCli } from '../helpers/server.js';

describe('choosing the database engine', () => {
  it('MNEMO_DATABASE_URL selects PostgreSQL, the flag overrides it, and without either it is SQLite in the data directory', () => {
    expect(loadConfig({}).databaseUrl).toBeNull();
    expect(loadConfig({ MNEMO_DATABASE_URL: 'postgres://mnemo@db/mnemo' }).databaseUrl).toBe('postgres://mnemo@db/mnemo');
    expect(loadConfig({ MNEMO_DATABASE_URL: 'postgres://a@db/x' }, { 'database-url': 'postgresql://b@db/y?sslmode=require' }).databaseUrl).toBe(
      'postgresql://b@db/y?sslmode=require',
    );
  });

  it('from the environment, MNEMO_DATABASE_URL selects PostgreSQL even with MNEMO_DATA_DIR set (serve keeps its pid file and locks there)', () => {
    const config = loadConfig({ MNEMO_DATA_DIR: '/var/lib/mnemo', MNEMO_DATABASE_URL: 'postgres://mnemo@db/mnemo' });
    expect(config.databaseUrl).toBe('postgres://mnemo@db/mnemo');
    expect(config.dataDir).toBe('/var/lib/mnemo');
  });

  it('a host name that does not resolve is "database unavailable", as a port that refuses is', async () => {
    const res = await runCli(['check', '--database-url', 'postgres://nobody@nope.invalid/none'], {}, { timeoutMs: 30_000 });
    expect([res.code, res.timedOut]).toEqual([1, false]);
    expect(res.stderr).toMatch(/^mnemo: database unavailable \(getaddrinfo (ENOTFOUND|EAI_AGAIN) nope\.invalid\)$/m);
  });

  it('a database URL that is not postgres:// is refused without echoing it (it may hold a password)', () => {
    expect(() => loadConfig({ MNEMO_DATABASE_URL: 'mysql://root:hunter2@db/x' })).toThrow(/only postgres:\/\/ or postgresql:\/\/ URLs/);
    expect(() => loadConfig({ MNEMO_DATABASE_URL: 'mysql://root:hunter2@db/x' })).not.toThrow(/hunter2/);
  });

  it('mnemo backup and restore on PostgreSQL refuse and name pg_dump and pg_restore', async () => {
    // Refused before any connection: the URL need not reach a server.
    const env = { MNEMO_DATABASE_URL: 'postgres://nobody@/none?host=/nonexistent' };
    const backup = await runCli(['backup', '/tmp/never-written.db'], env);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain('pg_dump');
    const restore = await runCli(['restore', '/tmp/never-read.db'], env);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain('pg_restore');
  });

  it.skipIf(pgSkip !== null)('check, keys list and workspaces list on a database without mnemo\'s schema refuse with exit 1 and create nothing in it', async () => {
    const db = await createDatabase();
    onTestFinished(db.drop);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    onTestFinished(() => c.end());
    // Another application's database.
    await c.query('CREATE TABLE customers (id int)');
    const name = (await c.query<{ n: string }>('SELECT current_database() AS n')).rows[0]!.n;
    for (const args of [['check'], ['keys', 'list'], ['workspaces', 'list']]) {
      const r = await runCli([...args, '--database-url', db.url], {}, { timeoutMs: 30_000 });
      expect([r.code, r.stdout, r.stderr], args.join(' ')).toEqual([
        1,
        '',
        `mnemo: no mnemo database in PostgreSQL database "${name}" (it has no schema_version table; mnemo serve creates one; check --database-url or MNEMO_DATABASE_URL)\n`,
      ]);
    }
    expect((await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows).toEqual([{ tablename: 'customers' }]);
    expect((await c.query('SELECT extname FROM pg_extension ORDER BY extname')).rows).toEqual([{ extname: 'plpgsql' }]);
  });

  it.skipIf(pgSkip !== null)('mnemo serve on a database whose schema is newer than its code refuses to start and says why', async () => {
    const db = await createDatabase();
    onTestFinished(db.drop);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    onTestFinished(() => c.end());
    await migrate(c, [...PG_MIGRATIONS, { version: PG_SCHEMA_VERSION + 1, sql: 'SELECT 1' }]);
    const r = await runCli(['serve', '--port', '0', '--database-url', db.url], {}, { timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`PostgreSQL schema version ${PG_SCHEMA_VERSION + 1} is newer than this mnemo understands (${PG_SCHEMA_VERSION})`);
  });
});

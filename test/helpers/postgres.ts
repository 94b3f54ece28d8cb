/**
 * @module A fresh PostgreSQL database per test file on the run's cluster (postgres-cluster.ts):
 * `CREATE DATABASE mnemo_t_<random>`, dropped after the file (databasePerFile) or when the test says (createDatabase). `pgSkip` says why PG tests skip
 * (null: they run; in CI they always run).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';

const provided = inject('postgres');

/** Why the PostgreSQL tests skip here, or null when a cluster is there. */
export const pgSkip: string | null = 'skip' in provided ? provided.skip : null;

/** The URL with another database name (the socket dir and port stay in the query). */
export function withDatabase(url: string, name: string): string {
  // Not `new URL`: a socket URL (postgres://user@/db?host=/dir) has credentials and no host, which WHATWG refuses.
  const m = /^(postgres(?:ql)?:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/.exec(url);
  if (!m) throw new Error(`not a postgres:// URL: ${url}`);
  return `${m[1]}/${name}${m[3] ?? ''}`;
}

/** Makes a database on the cluster; `drop` removes it (with force: a pool a test left open must not keep it). */
export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!('url' in provided)) throw new Error(`no PostgreSQL: ${provided.skip}`);
  const admin = provided.url;
  const name = `mnemo_t_${randomBytes(6).toString('hex')}`;
  // A UTF-8 LC_CTYPE, as the README asks of a mnemo database: case folding beyond ASCII (substring search) follows it.
  await onAdmin(admin, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.utf8'`));
  return { url: withDatabase(admin, name), drop: () => onAdmin(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

/**
 * A database for this test file: call it where tests are collected (a describe body, not a hook);
 * it makes the database before the file's own beforeAll hooks that come after it, and drops it
 * after the file. Returns the URL getter.
 */
export function databasePerFile(): () => string {
  let db: { url: string; drop: () => Promise<void> } | null = null;
  beforeAll(async () => {
    db = await createDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });
  return () => {
    if (!db) throw new Error('the database is made in beforeAll: read its URL in a hook or a test');
    return db.url;
  };
}

async function onAdmin(url: string, fn: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * @module A fresh PostgreSQL database per test file on the run's cluster (postgres-cluster.ts):
 * `CREATE DATABASE mnemo_t_<random>`, dropped after the file (databasePerFile) or when the test says (createDatabase). `pgSkip` says why PG tests skip
 * (null: they run; in CI they always run).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { onAdmin, withDatabase } from './pg-url.js';

export { withDatabase };

const provided = inject('postgres');

/** Why the PostgreSQL tests skip here, or null when a cluster is there. */
export const pgSkip: string | null = 'skip' in provided ? provided.skip : null;

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


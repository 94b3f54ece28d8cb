/**
 * @module A fresh PostgreSQL database per test file on the run's cluster (postgres-cluster.ts):
 * `CREATE DATABASE mnemo_t_<random>`, dropped after the file. `pgSkip` says why PG tests skip
 * (null: they run; in CI they always run).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';

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

/**
 * Makes a database for this test file and returns its URL; dropped (with force: a test that left a
 * pool open must not leave the database behind) when the file ends.
 */
export async function freshDatabase(): Promise<string> {
  if (!('url' in provided)) throw new Error(`no PostgreSQL: ${provided.skip}`);
  const admin = provided.url;
  const name = `mnemo_t_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  afterAll(async () => {
    const d = new pg.Client({ connectionString: admin });
    await d.connect();
    try {
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await d.end();
    }
  });
  return withDatabase(admin, name);
}

/**
 * @module PostgreSQL URL and admin-connection helpers with no vitest in them, so the bench
 * (test/bench/) can import them as well as the tests (test/helpers/postgres.ts).
 */
import pg from 'pg';

/** The URL with another database name (the socket dir and port stay in the query). */
export function withDatabase(url: string, name: string): string {
  // Not `new URL`: a socket URL (postgres://user@/db?host=/dir) has credentials and no host, which WHATWG refuses.
  const m = /^(postgres(?:ql)?:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/.exec(url);
  if (!m) throw new Error(`not a postgres:// URL: ${url}`);
  return `${m[1]}/${name}${m[3] ?? ''}`;
}

/** Runs `fn` on a connection of its own to `url` (CREATE and DROP DATABASE cannot run in a pool's transaction). */
export async function onAdmin(url: string, fn: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await fn(c);
  } finally {
    await c.end();
  }
}

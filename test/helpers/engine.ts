/**
 * @module Runs a test file's real servers on PostgreSQL: `serveOnPostgres()`, called where tests
 * are collected (before the file's own hooks), gives each data directory a server starts on a
 * fresh database of its own on the run's cluster (test/helpers/postgres.ts), the same one again
 * when a server restarts on that directory, and drops them after the file. The runners in
 * test/api/on-postgres/ call it and then import an API test file unchanged.
 */
import { afterAll, it } from 'vitest';
import { createDatabase, pgSkip } from './postgres.js';
import { useServerDatabase } from './server.js';

let postgres = false;

/** Whether this file's servers run on PostgreSQL: assertions that differ by engine read it (README, "what differs"). */
export const onPostgres = (): boolean => postgres;

/** Returns false (and registers one skipped test saying why) when the run has no PostgreSQL. */
const databases = new Map<string, Promise<{ url: string; drop: () => Promise<void> }>>();

/** The database the servers on `dataDir` serve (made on first use). */
export async function databaseFor(dataDir: string): Promise<string> {
  let db = databases.get(dataDir);
  if (!db) databases.set(dataDir, (db = createDatabase()));
  return (await db).url;
}

export function serveOnPostgres(): boolean {
  if (pgSkip !== null) {
    it.skip(`on PostgreSQL (skipped: ${pgSkip})`, () => {});
    return false;
  }
  postgres = true;
  useServerDatabase(databaseFor);
  afterAll(async () => {
    for (const db of databases.values()) await (await db).drop();
  });
  return true;
}

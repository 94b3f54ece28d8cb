/**
 * The PostgreSQL adapter runs every role's conformance suite (test/src/storage.suite.ts), as the
 * SQLite adapter does in sqlite.test.ts: each test opens a fresh database on the run's cluster
 * (test/helpers/postgres.ts), dropped when the test closes its storage.
 */
import { describe } from 'vitest';
import { openPostgresStorage } from '../../src/storage/postgres/open.js';
import type { Storage } from '../../src/storage/port.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { runStorageSuite } from './storage.suite.js';

async function freshPostgres(): Promise<Storage> {
  const db = await createDatabase();
  const storage = await openPostgresStorage(db.url);
  let dropped = false;
  return {
    ...storage,
    async close() {
      await storage.close();
      if (dropped) return;
      dropped = true;
      await db.drop();
    },
  };
}

describe.skipIf(pgSkip !== null)(`postgres storage${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  runStorageSuite(freshPostgres);
});

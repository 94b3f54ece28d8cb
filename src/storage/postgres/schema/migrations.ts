/**
 * @module PostgreSQL migrations, versioned like SQLite's (sqlite/schema/migrations.ts) but kept in a
 * `schema_version` table (PostgreSQL has no user_version). Many servers may start at once on one
 * database: `migrate` runs under a session advisory lock, so exactly one applies what is pending and
 * the others then find it done; a server older than the database's schema refuses to start.
 */
import type pg from 'pg';
import { PG_MIGRATION_1 } from './v1.js';
import { PG_MIGRATION_2 } from './v2.js';
import { PG_MIGRATION_3 } from './v3.js';
import { PG_MIGRATION_4 } from './v4.js';
import { PG_MIGRATION_5 } from './v5.js';
import { PG_MIGRATION_6 } from './v6.js';
import { PG_MIGRATION_7 } from './v7.js';
import { PG_MIGRATION_8 } from './v8.js';
import { PG_MIGRATION_9 } from './v9.js';
import { PG_MIGRATION_10 } from './v10.js';
import { PG_MIGRATION_11 } from './v11.js';
import { PG_MIGRATION_12 } from './v12.js';
import { PG_MIGRATION_13 } from './v13.js';
import { PG_MIGRATION_14 } from './v14.js';
import { PG_MIGRATION_15 } from './v15.js';
import { PG_MIGRATION_16 } from './v16.js';
import { PG_MIGRATION_17 } from './v17.js';
import { PG_MIGRATION_18 } from './v18.js';
import { PG_MIGRATION_19 } from './v19.js';
import { PG_MIGRATION_20 } from './v20.js';
import { PG_MIGRATION_21 } from './v21.js';
import { PG_MIGRATION_22 } from './v22.js';
import { PG_MIGRATION_23 } from './v23.js';
import { PG_MIGRATION_24 } from './v24.js';
import { PG_MIGRATION_25 } from './v25.js';
import { PG_MIGRATION_26 } from './v26.js';
import { PG_MIGRATION_27 } from './v27.js';
import { PG_MIGRATION_28 } from './v28.js';

export interface PgMigration {
  version: number;
  sql: string;
}

export const PG_MIGRATIONS: PgMigration[] = [
  // SQLite's schema 1–8 (through the mount attributes of issue 12). See postgres/schema/v1.ts.
  { version: 1, sql: PG_MIGRATION_1 },
  // SQLite's 9 and 10: commit order, retention, the admin-actions log. See postgres/schema/v2.ts.
  { version: 2, sql: PG_MIGRATION_2 },
  // SQLite's 12: the node a session is mounted on.
  { version: 3, sql: PG_MIGRATION_3 },
  // SQLite's history migration: path_seq and the history indexes. See postgres/schema/v4.ts.
  { version: 4, sql: PG_MIGRATION_4 },
  // SQLite's 13: content stored once. See postgres/schema/v5.ts.
  { version: 5, sql: PG_MIGRATION_5 },
  // SQLite's 14: forks. See postgres/schema/v6.ts.
  { version: 6, sql: PG_MIGRATION_6 },
  // SQLite's 15: version numbers at a path never reused. See postgres/schema/v7.ts.
  { version: 7, sql: PG_MIGRATION_7 },
  // SQLite's 16: web console sign-ins in the database. See postgres/schema/v8.ts.
  { version: 8, sql: PG_MIGRATION_8 },
  // SQLite's 17: memory rows name their text by sha only. See postgres/schema/v9.ts.
  { version: 9, sql: PG_MIGRATION_9 },
  // PostgreSQL's own: a memory write in two round trips, search indexed from a backlog. See postgres/schema/v10.ts.
  { version: 10, sql: PG_MIGRATION_10 },
  // PostgreSQL's own: a write's admission (the store and its usage) read in its probe. See postgres/schema/v11.ts.
  { version: 11, sql: PG_MIGRATION_11 },
  // PostgreSQL's own: a text's trigrams indexed by the search upkeep, off the write path. See postgres/schema/v12.ts.
  { version: 12, sql: PG_MIGRATION_12 },
  // PostgreSQL's own: the same words of a text, found faster (the search upkeep). See postgres/schema/v13.ts.
  { version: 13, sql: PG_MIGRATION_13 },
  // SQLite's 18: a deleted store hidden at once, its rows removed in steps. See postgres/schema/v14.ts.
  { version: 14, sql: PG_MIGRATION_14 },
  // PostgreSQL's own: the purge of a deleted store sliced to its end, its texts locked in order. See postgres/schema/v15.ts.
  { version: 15, sql: PG_MIGRATION_15 },
  // PostgreSQL's own: a directory move's commit numbers taken a page at a time. See postgres/schema/v16.ts.
  { version: 16, sql: PG_MIGRATION_16 },
  // PostgreSQL's own: an API create in one statement, refused back to the probe when it would not pass. See postgres/schema/v17.ts.
  { version: 17, sql: PG_MIGRATION_17 },
  // PostgreSQL's own: the write probe finds a memory by id through the id's index. See postgres/schema/v18.ts.
  { version: 18, sql: PG_MIGRATION_18 },
  // PostgreSQL's own: a directory move's page appended and moved by one statement each. See postgres/schema/v19.ts.
  { version: 19, sql: PG_MIGRATION_19 },
  // PostgreSQL's own: the commit-order trigger tests a move's block before it reads the store's row. See postgres/schema/v20.ts.
  { version: 20, sql: PG_MIGRATION_20 },
  // SQLite's 20: a deleted store's idempotency receipts hidden with it and purged with its rows. See postgres/schema/v21.ts.
  { version: 21, sql: PG_MIGRATION_21 },
  // SQLite's 21: the API key that created a session. See postgres/schema/v22.ts.
  { version: 22, sql: PG_MIGRATION_22 },
  // SQLite's 22: a version carries its content's time and its memory's creation. See postgres/schema/v23.ts.
  { version: 23, sql: PG_MIGRATION_23 },
  // SQLite's 23: a store's checkpoints count in its usage counter. See postgres/schema/v24.ts.
  { version: 24, sql: PG_MIGRATION_24 },
  // SQLite's 24: the key that seals page cursors. See postgres/schema/v25.ts.
  { version: 25, sql: PG_MIGRATION_25 },
  // SQLite's 26: at most one default workspace. See postgres/schema/v26.ts.
  { version: 26, sql: PG_MIGRATION_26 },
  // SQLite's 27: why a fork's build was deleted while it ran. See postgres/schema/v27.ts.
  { version: 27, sql: PG_MIGRATION_27 },
  // SQLite's 28: the usage counter keeps its checkpoints' bytes apart. See postgres/schema/v28.ts.
  { version: 28, sql: PG_MIGRATION_28 },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** The advisory lock key every mnemo takes to migrate (any bigint; this one spells "mnemo mig"). */
export const MIGRATION_LOCK_KEY = 0x6d6e656d6f6d6967n;

/** Thrown when the database's schema is newer than this code: the server must not start on it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `PostgreSQL schema version ${found} is newer than this mnemo understands (${known}): ` +
        'another host runs a newer mnemo; upgrade this one before starting it',
    );
    this.name = 'SchemaTooNewError';
  }
}

/** The database's name, and whether mnemo's schema is in it (its `schema_version` table, on the search path). */
export async function schemaPresence(client: pg.ClientBase): Promise<{ database: string; found: boolean }> {
  const r = await client.query<{ database: string; found: boolean }>("SELECT current_database() AS database, to_regclass('schema_version') IS NOT NULL AS found");
  return r.rows[0]!;
}

/**
 * Brings the database to PG_SCHEMA_VERSION (or refuses, SchemaTooNewError), on one dedicated client;
 * says from which version to which when it migrated (null: it was current).
 */
export async function migrate(client: pg.ClientBase, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<{ from: number; to: number } | null> {
  const known = migrations[migrations.length - 1]!.version;
  // A session lock, not a transaction one: it is held across the check and every migration, and
  // PostgreSQL drops it if this process dies mid-way.
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
  try {
    await client.query('BEGIN');
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)');
      const r = await client.query<{ version: number }>('SELECT version FROM schema_version');
      const current = r.rows[0]?.version ?? 0;
      if (current > known) throw new SchemaTooNewError(current, known);
      for (const m of migrations.filter((x) => x.version > current)) await client.query(m.sql);
      if (current < known) {
        await client.query(
          'INSERT INTO schema_version (one, version) VALUES (true, $1) ON CONFLICT (one) DO UPDATE SET version = excluded.version',
          [known],
        );
      }
      await client.query('COMMIT');
      return current < known ? { from: current, to: known } : null;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
  }
}

/**
 * @module The SQLite schema as a spec, and its migrations keyed by `PRAGMA user_version`.
 *
 * Invariants (the adapter keeps 1–6; the database itself enforces 7 and 8 with triggers):
 *  1. IDs never change; a memory keeps its id across renames.
 *  2. Live memory paths in one store never overlap: no path equals, or is an ancestor of, another.
 *  3. Every memory's `version_id` names a version of that memory whose content and sha match the row.
 *  4. Every real change (create, content or path change, delete) appends exactly one version row;
 *     a change that changes nothing appends none.
 *  5. Versions are ordered by `seq` (insertion order); lists are newest first. Per store, `commit_seq`
 *     numbers them in commit order with no gaps (invariant 15, sqlite/schema/feed.ts).
 *  6. Deleting a store deletes its memories and versions (ON DELETE CASCADE), and the idempotency
 *     receipts naming it (migration 20), nothing else.
 *  7. A version row is never updated except by redaction, which nulls path/content/sha/size and
 *     sets redacted_at/redacted_by exactly once.
 *  8. A version row is never deleted while its store exists.
 *  9. An idempotency receipt commits with the mutation it answers; a receipt naming a version
 *     names one that exists while its store exists, and holds none of its text once it is
 *     redacted (redaction rewrites the receipt in its own transaction: sqlite/receipts.ts).
 */

import { MIGRATION_3 } from './continuity.js';
import { MIGRATION_5 } from './search.js';
import { MIGRATION_7 } from './hardening.js';
import { MIGRATION_6 } from './limits.js';
import { MIGRATION_8 } from './attrs.js';
import { MIGRATION_9 } from './feed.js';
import { MIGRATION_10 } from './audit.js';
import { MIGRATION_11 } from './history.js';
import { MIGRATION_12 } from './nodes.js';
import { MIGRATION_13 } from './contents.js';
import { MIGRATION_17 } from './memory-text.js';
import { MIGRATION_14 } from './forks.js';
import { MIGRATION_15 } from './path-numbers.js';
import { MIGRATION_16 } from './console.js';
import { MIGRATION_18 } from './deleted-stores.js';
import { MIGRATION_19 } from './search-remnants.js';
import { MIGRATION_20 } from './store-receipts.js';
import { MIGRATION_21 } from './session-keys.js';
import { MIGRATION_22 } from './content-times.js';
import { MIGRATION_23 } from './checkpoint-usage.js';
import { MIGRATION_24 } from './page-key.js';
import { MIGRATION_25 } from './content-time-trigger.js';
import { MIGRATION_26 } from './one-default.js';
import { MIGRATION_27 } from './fork-abandonments.js';
import { MIGRATION_28 } from './checkpoint-bytes.js';

export interface Migration {
  version: number;
  sql: string;
}

/**
 * Applied in version order, whatever their order here: numbers are taken by whoever writes a migration,
 * and one may be merged before a lower one (25 before 24). A file at some version gets every
 * migration numbered above it.
 */
export const MIGRATIONS: Migration[] = ([
  {
    version: 1,
    sql: `
CREATE TABLE workspaces (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  is_default  INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
  name          TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('admin', 'read_write', 'read_only')),
  key_hash      TEXT NOT NULL UNIQUE,
  created_at    TEXT NOT NULL,
  revoked_at    TEXT
);

CREATE TABLE stores (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
  name          TEXT NOT NULL,
  description   TEXT NOT NULL,
  metadata      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  archived_at   TEXT
);
CREATE INDEX stores_by_workspace ON stores (workspace_id, seq);

CREATE TABLE memories (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
  id                  TEXT NOT NULL UNIQUE,
  store_id            TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  path                TEXT NOT NULL,
  content             TEXT NOT NULL,
  content_sha256      TEXT NOT NULL,
  content_size_bytes  INTEGER NOT NULL,
  version_id          TEXT NOT NULL,
  mode                INTEGER NOT NULL DEFAULT 420,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  UNIQUE (store_id, path)
);

CREATE TABLE versions (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
  id                  TEXT NOT NULL UNIQUE,
  store_id            TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  memory_id           TEXT NOT NULL,
  operation           TEXT NOT NULL CHECK (operation IN ('created', 'modified', 'deleted')),
  path                TEXT,
  content             TEXT,
  content_sha256      TEXT,
  content_size_bytes  INTEGER,
  created_at          TEXT NOT NULL,
  actor_type          TEXT NOT NULL,
  actor_id            TEXT NOT NULL,
  redacted_at         TEXT,
  redacted_by_type    TEXT,
  redacted_by_id      TEXT
);
CREATE INDEX versions_by_store ON versions (store_id, seq);
CREATE INDEX versions_by_memory ON versions (store_id, memory_id, seq);
CREATE INDEX versions_by_actor ON versions (store_id, actor_type, actor_id, seq);

CREATE TRIGGER versions_append_only_delete BEFORE DELETE ON versions
WHEN EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only deleting the store removes them');
END;

CREATE TRIGGER versions_append_only_update BEFORE UPDATE ON versions
WHEN NOT (
  OLD.redacted_at IS NULL AND NEW.redacted_at IS NOT NULL
  AND NEW.redacted_by_type IS NOT NULL AND NEW.redacted_by_id IS NOT NULL
  AND NEW.path IS NULL AND NEW.content IS NULL
  AND NEW.content_sha256 IS NULL AND NEW.content_size_bytes IS NULL
  AND NEW.seq = OLD.seq AND NEW.id = OLD.id AND NEW.store_id = OLD.store_id
  AND NEW.memory_id = OLD.memory_id AND NEW.operation = OLD.operation
  AND NEW.created_at = OLD.created_at
  AND NEW.actor_type = OLD.actor_type AND NEW.actor_id = OLD.actor_id
)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only redaction may change a version');
END;

CREATE TABLE sessions (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
  status        TEXT NOT NULL CHECK (status IN ('active', 'ended')),
  resources     TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  ended_at      TEXT
);
CREATE INDEX sessions_by_workspace ON sessions (workspace_id, seq);
`,
  },
  {
    // Scoped keys and idempotency receipts (issue 4). Invariant 9: a receipt is written in the same
    // transaction as the mutation it answers, so one never exists without the other.
    version: 2,
    sql: `
ALTER TABLE api_keys ADD COLUMN store_ids TEXT;
ALTER TABLE api_keys ADD COLUMN all_workspaces INTEGER NOT NULL DEFAULT 0;
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, created_at);
-- The operator key seeded on first start acts on every workspace.
UPDATE api_keys SET all_workspaces = 1 WHERE role = 'admin' AND name IN ('admin (MNEMO_ADMIN_KEY)', 'admin (generated)');

CREATE TABLE idempotency_receipts (
  workspace_id  TEXT NOT NULL,
  api_key_id    TEXT NOT NULL,
  route         TEXT NOT NULL,
  idem_key      TEXT NOT NULL,
  fingerprint   TEXT NOT NULL,
  status        INTEGER NOT NULL,
  body          TEXT NOT NULL,
  store_id      TEXT,
  version_id    TEXT,
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  PRIMARY KEY (workspace_id, api_key_id, route, idem_key)
);
CREATE INDEX idempotency_receipts_by_expiry ON idempotency_receipts (expires_at);
`,
  },
  {
    // Agent continuity (issue 6): expiring memories, full-text search, checkpoints. See sqlite/schema/continuity.ts.
    version: 3,
    sql: MIGRATION_3,
  },
  {
    // Speed (issue 5): stat and directory listings read every column but content from this index.
    // In the table those columns sit after content, so reading them walks the content's overflow
    // pages: a stat of a 100 KiB memory took 40 µs of SQL, and takes 5 µs from here.
    version: 4,
    sql: `
CREATE INDEX memories_meta_by_path ON memories
  (store_id, path, id, version_id, content_sha256, content_size_bytes, mode, created_at, updated_at, expires_at);
`,
  },
  {
    // Speed: writes queue full-text indexing instead of doing it (invariant 11). See sqlite/schema/search.ts.
    version: 5,
    sql: MIGRATION_5,
  },
  {
    // Limits (issue 11): a per-store usage counter and an index of active sessions. See sqlite/schema/limits.ts.
    version: 6,
    sql: MIGRATION_6,
  },
  {
    // Hardening (issue 11): one seeded admin key; sessions of `mnemo mount`. See sqlite/schema/hardening.ts.
    version: 7,
    sql: MIGRATION_7,
  },
  {
    // Mount attributes (issue 12): times and ownership kept with a memory, not versioned. See sqlite/schema/attrs.ts.
    version: 8,
    sql: MIGRATION_8,
  },
  {
    // Change feed (issue 15): each store's commit order on its versions. See sqlite/schema/feed.ts.
    version: 9,
    sql: MIGRATION_9,
  },
  {
    // Web console (issue 16): the append-only log of admin actions. See sqlite/schema/audit.ts.
    version: 10,
    sql: MIGRATION_10,
  },
  {
    // History by path (issue 15): each version's number at its path, for .history and as_of mounts. See sqlite/schema/history.ts.
    version: 11,
    sql: MIGRATION_11,
  },
  {
    // The node a session is mounted on (issue 14): sqlite/schema/nodes.ts.
    version: 12,
    sql: MIGRATION_12,
  },
  {
    // Content stored once (issue 15): versions name their text by sha in `contents`. See sqlite/schema/contents.ts.
    version: 13,
    sql: MIGRATION_13,
  },
  {
    // Forks (issue 15): where a store was forked from, and a fork hidden while it is built. See sqlite/schema/forks.ts.
    version: 14,
    sql: MIGRATION_14,
  },
  {
    // Version numbers at a path are never reused (issue 15). See sqlite/schema/path-numbers.ts.
    version: 15,
    sql: MIGRATION_15,
  },
  {
    // Web console sign-ins kept in the database (issue 14: many servers, one store). See sqlite/schema/console.ts.
    version: 16,
    sql: MIGRATION_16,
  },
  {
    // Memory rows name their text by sha only (issue 15): a fork copies no text. See sqlite/schema/memory-text.ts.
    version: 17,
    sql: MIGRATION_17,
  },
  {
    // A deleted store is hidden at once and its rows removed in short steps. See sqlite/schema/deleted-stores.ts.
    version: 18,
    sql: MIGRATION_18,
  },
  {
    // Re-indexing without secure-delete where no erasure is promised; erasure by merging. See sqlite/schema/search-remnants.ts.
    version: 19,
    sql: MIGRATION_19,
  },
  {
    // A deleted store's idempotency receipts are hidden with it and removed with its rows. See sqlite/schema/store-receipts.ts.
    version: 20,
    sql: MIGRATION_20,
  },
  {
    // The API key that created a session, so that revoking the key ends it. See sqlite/schema/session-keys.ts.
    version: 21,
    sql: MIGRATION_21,
  },
  {
    // A version carries its content's time and its memory's creation, the times an as_of mount shows. See sqlite/schema/content-times.ts.
    version: 22,
    sql: MIGRATION_22,
  },
  {
    // A store's checkpoints count in its usage counter, against MNEMO_STORE_MAX_BYTES. See sqlite/schema/checkpoint-usage.ts.
    version: 23,
    sql: MIGRATION_23,
  },
  {
    // The key that seals page cursors, shared by every process on the file. See sqlite/schema/page-key.ts.
    version: 24,
    sql: MIGRATION_24,
  },
  {
    // The database fills a version's content time and memory creation when an older writer leaves them out. See sqlite/schema/content-time-trigger.ts.
    version: 25,
    sql: MIGRATION_25,
  },
  {
    // At most one default workspace, by a partial unique index. See sqlite/schema/one-default.ts.
    version: 26,
    sql: MIGRATION_26,
  },
  {
    // Why a fork's build was deleted while it ran. See sqlite/schema/fork-abandonments.ts.
    version: 27,
    sql: MIGRATION_27,
  },
  {
    // The usage counter keeps its checkpoints' bytes apart, so the memories' bytes alone are one read. See sqlite/schema/checkpoint-bytes.ts.
    version: 28,
    sql: MIGRATION_28,
  },
] satisfies Migration[]).sort((a, b) => a.version - b.version);

/** The schema this code reads and writes: the highest migration's number. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

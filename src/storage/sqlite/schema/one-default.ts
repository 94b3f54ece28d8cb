/**
 * @module Migration 26: at most one default workspace (invariant 22), held by the database.
 *
 * The service makes the default workspace when it first needs it and none exists. Seeding the
 * admin key does that under its own lock, but an admin command that names no workspace does it
 * too, outside that lock, so two processes meeting a fresh database could each make one; every
 * later read then picked whichever came first in the index. A partial unique index makes the
 * second insert a no-op (the adapter inserts the default with ON CONFLICT DO NOTHING and reads back
 * the one that won). A file that already has several keeps its oldest as the default; the others
 * stay as ordinary workspaces named `default`, with their keys and stores.
 */
export const MIGRATION_26 = `
UPDATE workspaces SET is_default = 0
WHERE is_default = 1
  AND id <> (SELECT id FROM workspaces WHERE is_default = 1 ORDER BY created_at, id LIMIT 1);
CREATE UNIQUE INDEX workspaces_one_default ON workspaces (is_default) WHERE is_default = 1;
`;

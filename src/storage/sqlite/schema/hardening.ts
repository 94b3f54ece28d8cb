/**
 * @module Migration 7 (issue 11): the one seeded admin key, and sessions owned by a `mnemo mount`.
 *
 * - `api_keys.seeded`: the key MNEMO_ADMIN_KEY (or the first start) seeded. At most one unrevoked
 *   key is seeded (a partial unique index), so a restart with another MNEMO_ADMIN_KEY cannot add a
 *   second operator key beside it: it is refused, or, with --rotate-admin-key, replaces it.
 *   Databases from before take their newest unrevoked bootstrap key (by its known name) as seeded.
 * - `sessions.local_pid`: set for the session of a `mnemo mount` process. The server never remounts
 *   it (that process serves it), and a session whose process is gone is ended by the next start.
 */
export const MIGRATION_7 = `
ALTER TABLE api_keys ADD COLUMN seeded INTEGER NOT NULL DEFAULT 0;
UPDATE api_keys SET seeded = 1 WHERE id = (
  SELECT id FROM api_keys
  WHERE role = 'admin' AND all_workspaces = 1 AND revoked_at IS NULL
    AND name IN ('admin (MNEMO_ADMIN_KEY)', 'admin (generated)')
  ORDER BY created_at DESC, rowid DESC LIMIT 1
);
CREATE UNIQUE INDEX api_keys_one_seeded ON api_keys (seeded) WHERE seeded = 1 AND revoked_at IS NULL;

ALTER TABLE sessions ADD COLUMN local_pid INTEGER;
`;

/**
 * @module Migration 8 (issue 12): POSIX attributes a mount keeps with a memory, never versioned.
 *
 * Times are integer microseconds since the epoch; NULL means "derived" (the rule the mount shows,
 * fs/stat.ts): mtime and ctime follow `updated_at`, atime follows the mtime; uid/gid NULL is the
 * serving process's. The adapter keeps them as src/domain/memory-attrs.ts decides:
 * - a content change sets mtime and ctime back to NULL (the save time), unless the save carries an
 *   mtime set after the last write (`cp -p`, `rsync -t`), and freezes a NULL atime at the old mtime,
 *   so atime moves only when set (as on a noatime mount);
 * - a rename keeps the mtime (frozen at the old `updated_at` if it was NULL) and moves the ctime;
 * - utimens, chmod and chown set what they set and move the ctime to their time.
 * The meta index is rebuilt with the new columns: a stat reads all of them from it, never the row.
 */
export const MIGRATION_8 = `
ALTER TABLE memories ADD COLUMN atime_us INTEGER;
ALTER TABLE memories ADD COLUMN mtime_us INTEGER;
ALTER TABLE memories ADD COLUMN ctime_us INTEGER;
ALTER TABLE memories ADD COLUMN uid INTEGER;
ALTER TABLE memories ADD COLUMN gid INTEGER;

DROP INDEX memories_meta_by_path;
CREATE INDEX memories_meta_by_path ON memories
  (store_id, path, id, version_id, content_sha256, content_size_bytes, mode, created_at, updated_at, expires_at,
   atime_us, mtime_us, ctime_us, uid, gid);
`;

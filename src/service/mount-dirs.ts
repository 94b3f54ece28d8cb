/**
 * @module The directories sessions mount at, <mount root>/<session id>/<slug>: removed when a
 * session ends, and on start for every session that is no longer active. Only empty directories
 * are removed (rmdir, never a recursive delete): files written into a bare mount point while it
 * was not mounted were never saved anywhere else, so they and their directories are kept (logged).
 */
import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ID_PREFIXES } from './ids.js';

type Log = (line: string) => void;

/** Removes a session's mount points and then its own directory, once they are unmounted. */
export async function removeSessionDirs(mountRoot: string, sessionId: string, hostPaths: readonly string[], log: Log): Promise<void> {
  for (const p of hostPaths) await removeEmpty(p, log);
  await removeEmpty(join(mountRoot, sessionId), log);
}

/**
 * Removes the directories of sessions that are not in `active` (ended, or gone with a crash);
 * called after stale mounts were cleared, so none of them is a mount any more.
 */
export async function sweepSessionDirs(mountRoot: string, active: ReadonlySet<string>, log: Log): Promise<void> {
  const entries = await readdir(mountRoot, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory() || !e.name.startsWith(ID_PREFIXES.session) || active.has(e.name)) continue;
    const dir = join(mountRoot, e.name);
    const slugs = await readdir(dir, { withFileTypes: true }).catch(() => []);
    await removeSessionDirs(mountRoot, e.name, slugs.filter((s) => s.isDirectory()).map((s) => join(dir, s.name)), log);
  }
}

async function removeEmpty(dir: string, log: Log): Promise<void> {
  try {
    await rmdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    log(`mnemo: kept ${dir}: ${code === 'ENOTEMPTY' ? 'it holds files that were written while it was not mounted' : String(err)}`);
  }
}

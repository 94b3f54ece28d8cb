/**
 * @module Sessions of `mnemo mount`: the directory it mounts is a session like any other for the
 * API (listed, retrievable, its writes attributed to it), but the `mnemo mount` process serves it,
 * so the session row carries that process's pid, and on SQLite the process holds a lock named after
 * the session in the data directory (storage/sqlite/lock.ts). A server never remounts such a
 * session, and one whose process is gone (kill -9) is ended by the next `mnemo mount` or `mnemo
 * serve` start, or by a running server's minute sweep: gone when its lock is free, else (no lock:
 * an older release's session, or PostgreSQL) when its pid is, a pid being checked only on its own
 * node, or on any node when the database is this host's alone (SQLite). The same check removes the
 * lock files no process holds that no active session is left to, such as one whose `mnemo mount`
 * was killed after taking its lock but before recording its session, and those of `mnemo mount`s
 * killed while they took their locks.
 */
import { ownSession } from '../domain/nodes.js';
import { slugify } from '../domain/paths.js';
import type { IdGenerator } from './ids.js';
import type { Storage } from '../storage/port.js';
import type { Mounter } from './mounts.js';
import type { Session, Store } from '../domain/types.js';

export interface LocalMount {
  store: Store;
  /** The absolute directory it is mounted at: both the agent's and the host's path. */
  hostPath: string;
  readOnly: boolean;
  pid?: number;
}

export interface LocalSessionDeps {
  storage: Pick<Storage, 'insertSession' | 'endSession' | 'listActiveLocalSessions'>;
  ids: IdGenerator;
  clock: () => string;
  /** This node: its `mnemo mount` sessions carry it, and only its own are checked for a live pid here (unless oneHost). */
  nodeId?: string | null;
  /**
   * The database is this host's alone (SQLite, one data directory): a session recorded by another
   * node id (the host renamed, the container re-created) is this node's to check.
   */
  oneHost?: boolean;
  /** The `mnemo mount` processes' locks in this data directory (SQLite). Default: no locks. */
  locks?: LocalMountLocks;
}

/** The locks `mnemo mount` processes take in the data directory, one per session (storage/sqlite/lock.ts). */
export interface LocalMountLocks {
  /**
   * Whether a session's `mnemo mount` process still holds the lock it took here (true or false;
   * one found free is removed), or null when no lock of that session is here.
   */
  held(sessionId: string): boolean | null;
  /** Removes the lock files here that no process holds, but those of the sessions `keep` names; returns whose it removed. */
  removeFree(keep: ReadonlySet<string>): string[];
  /**
   * Removes the files no process holds that `mnemo mount` processes killed while taking their locks
   * left (never one a live process is taking); returns their names.
   */
  removeLeftovers(): string[];
}

const NO_LOCKS: LocalMountLocks = { held: () => null, removeFree: () => [], removeLeftovers: () => [] };

export function createLocalSessions({ storage, ids, clock, nodeId = null, oneHost = false, locks = NO_LOCKS }: LocalSessionDeps) {
  async function end(session: Session): Promise<void> {
    await storage.endSession(session.workspaceId, session.id, clock());
  }

  /**
   * Ends the active local sessions whose `mnemo mount` process no longer runs, then removes the
   * free lock files of no session left active, and those killed processes left half taken; returns
   * the sessions ended, whose files went, and the names of the half-taken files that went.
   */
  async function endStale(alive: (pid: number) => boolean = pidAlive): Promise<{ ended: Session[]; unlocked: string[]; leftovers: string[] }> {
    const ended: Session[] = [];
    const left = new Set<string>();
    for (const s of await storage.listActiveLocalSessions()) {
      left.add(s.id);
      // The lock tells, whatever node id or pid namespace its process has.
      const held = locks.held(s.id);
      if (held === true) continue;
      if (held === null) {
        // Another host's pid means nothing here.
        if (!oneHost && !ownSession(s, nodeId)) continue;
        if (s.localPid != null && alive(s.localPid)) continue;
      }
      await end(s);
      ended.push(s);
      left.delete(s.id);
    }
    // A session recorded since the list was read: its process holds its lock, which is left alone.
    return { ended, unlocked: locks.removeFree(left), leftovers: locks.removeLeftovers() };
  }

  return {
    /** A new active session for a local mount (not yet stored: mount first, then `record`). */
    start(m: LocalMount): Session {
      return {
        id: ids('session'),
        workspaceId: m.store.workspaceId,
        status: 'active',
        resources: [
          {
            type: 'memory_store',
            storeId: m.store.id,
            access: m.readOnly ? 'read_only' : 'read_write',
            instructions: null,
            name: m.store.name,
            description: m.store.description,
            slug: slugify(m.store.name),
            mountPath: m.hostPath,
            hostPath: m.hostPath,
          },
        ],
        createdAt: clock(),
        endedAt: null,
        localPid: m.pid ?? process.pid,
        ...(nodeId === null ? {} : { nodeId }),
      };
    },

    record(session: Session): Promise<void> {
      return storage.insertSession(session);
    },

    end,
    endStale,

    /**
     * Ends the local sessions whose process is gone, and clears the dead mounts they may have left
     * (auto_unmount usually removes them as the process dies, but can lose a race); logs each.
     */
    async endStaleMounts(mounter: Mounter, log: (line: string) => void): Promise<void> {
      const { ended, unlocked, leftovers } = await endStale();
      for (const s of ended) {
        const node = ownSession(s, nodeId) ? '' : ` of node ${s.nodeId}`;
        log(`ended session ${s.id}${node}: its mnemo mount process is gone`);
        for (const r of s.resources) await mounter.clearDead?.(r.hostPath);
      }
      for (const id of unlocked) log(`removed the lock file of ${id}: no mnemo mount process holds it, and no active session is its`);
      for (const name of leftovers) log(`removed the unfinished lock file ${name}: a mnemo mount was killed while taking it, and no process holds it`);
    },
  };
}

export type LocalSessions = ReturnType<typeof createLocalSessions>;

/** Signal 0 tests for the process without touching it; EPERM means it exists under another user. */
function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

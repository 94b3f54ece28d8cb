/**
 * @module Readiness (GET /readyz): the database answers a query, and every active session's
 * mounts are live (this node's: another node mounts its own). A session resource whose store is gone is not expected to be mounted
 * (service/sessions.ts skips it too).
 */
import { resolve } from 'node:path';
import type { Mounter } from './mounts.js';
import type { Storage } from '../storage/port.js';
import { ownSession } from '../domain/nodes.js';
import { MnemoError } from '../domain/errors.js';

export interface Readiness {
  ready: boolean;
  /** "ok", "database unavailable" (out of reach), or what failed. */
  database: string;
  /** Host paths of active sessions that should be mounted and are not. */
  unmounted: string[];
  activeSessions: number;
  mounts: number;
}

export async function checkReadiness(storage: Pick<Storage, 'listActiveSessions' | 'getStoreById'>, mounter: Pick<Mounter, 'mounted'>, nodeId: string | null = null): Promise<Readiness> {
  const live = new Set((await mounter.mounted?.()) ?? []);
  let sessions;
  try {
    // Another node's sessions are mounted on that node, not here.
    sessions = (await storage.listActiveSessions()).filter((s) => ownSession(s, nodeId));
  } catch (err) {
    return { ready: false, database: databaseCheck(err), unmounted: [], activeSessions: 0, mounts: live.size };
  }
  const unmounted: string[] = [];
  for (const s of sessions) {
    for (const r of s.resources) {
      if (!live.has(resolve(r.hostPath)) && (await storage.getStoreById(r.storeId))) unmounted.push(r.hostPath);
    }
  }
  return { ready: unmounted.length === 0, database: 'ok', unmounted, activeSessions: sessions.length, mounts: live.size };
}

/**
 * The database check's words: "database unavailable" only when it is out of reach; a database that
 * answered but failed says what failed (the adapter's `reason`, or the error's own message).
 */
function databaseCheck(err: unknown): string {
  if (err instanceof MnemoError && err.code === 'unavailable' && err.details.reason) return err.details.reason;
  return err instanceof Error ? err.message : String(err);
}

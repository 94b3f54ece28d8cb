/**
 * @module Mount sessions: records with a snapshot of each attached store, mounted through the
 * Mounter port at <mount root>/<session id>/<slug>, and the system-prompt text for the agent.
 */
import { basename, isAbsolute, join, relative, sep } from 'node:path';
import { assertAllowed, storeGranted } from '../domain/access.js';
import { MnemoError, notFound } from '../domain/errors.js';
import { bindPage, scopeTag, unbindPage } from '../domain/page-scope.js';
import type { Audit } from './audit.js';
import type { IdGenerator } from './ids.js';
import type { Limits } from './limits.js';
import type { LocalSessions } from './local-sessions.js';
import { mountAccess, type Mounter, type MountService } from './mounts.js';
import { removeSessionDirs, sweepSessionDirs } from './mount-dirs.js';
import { ownSession } from '../domain/nodes.js';
import { slugify } from '../domain/paths.js';
import type { Storage } from '../storage/port.js';
import type { Caller, Page, Session, SessionResource, Store } from '../domain/types.js';
import { assertPast, type SessionRequest } from '../validate/index.js';
import type { ReceiptHooks } from './idempotency.js';

export const AGENT_MOUNT_ROOT = '/mnt/memory';

export interface SessionsOptions {
  storage: Pick<Storage, 'atomic' | 'getStoreById' | 'insertSession' | 'getSession' | 'listSessions' | 'pageKey' | 'listActiveSessions' | 'moveSession' | 'listActiveSessionsOfKey' | 'endSession'>;
  /** The store a caller may see (404 otherwise): the service's own check. */
  getStore: (caller: Caller, id: string) => Promise<Store>;
  ids: IdGenerator;
  clock: () => string;
  /** The limits over a storage: the session's room is checked inside its transaction. */
  limits: (storage: Storage) => Pick<Limits, 'assertSessionRoom'>;
  local: LocalSessions;
  mounter: Mounter;
  /** What each mount writes through and reads from (null: this storage cannot serve mounts yet). */
  mountService: MountService | null;
  mountRoot: string;
  log?: (line: string) => void;
  /** Records each session a caller ends, in the transaction that ends it. */
  audit?: Pick<Audit, 'within'>;
  /** The node whose sessions this process serves: restore mounts only its own (null: every session, as the sole server of a SQLite file). */
  nodeId?: string | null;
  /** The only server on its database (SQLite): restore mounts every session, adopting another node's. */
  soleServer?: boolean;
}

/**
 * Lets the caller write something (an idempotency receipt) in the same transaction as the session
 * row, through that transaction's `tx`, and take it back if the session fails to mount.
 */
export type SessionHooks = ReceiptHooks<Session>;

/** A session is visible to a key only if every store it mounts is inside the key's grant. */
function visible(caller: Caller, s: Session): boolean {
  return s.resources.every((r) => storeGranted(caller, r.storeId));
}

/** Creating or ending a session that mounts a store read-write needs write access; read-only mounts need read. */
function assertMayMount(caller: Caller, resources: { access: string }[]): void {
  assertAllowed(caller, resources.some((r) => r.access === 'read_write') ? 'write' : 'read');
}

export function createSessions({ storage, getStore, ids, clock, limits, local, mounter, mountService, mountRoot, log = () => {}, audit, nodeId = null, soleServer = false }: SessionsOptions) {
  /** The sessions this server has mounted, by id: what it unmounts when another server ends one. */
  const mounted = new Map<string, Session>();

  async function mountAll(session: Session): Promise<void> {
    mounted.set(session.id, session);
    const actor = { type: 'session_actor' as const, sessionId: session.id };
    for (const r of session.resources) {
      const access = mountAccess(await storage.getStoreById(r.storeId), r.access === 'read_only');
      if (access === 'gone') continue;
      if (!mountService) throw new MnemoError('internal', 'this storage cannot serve mounts yet');
      const asOf = r.asOf ?? null;
      await mounter.mount({ storeId: r.storeId, hostPath: r.hostPath, readOnly: asOf !== null || access !== 'writable', actor, service: mountService, ...(asOf === null ? {} : { asOf }) });
    }
  }

  /**
   * A session as this server mounts it, its row updated to say so. A server mounts only under its
   * own mount root: a session recorded under another one (a server started on a backup copy, a
   * changed --mount-root) moves to <mount root>/<session id>/<slug> here, with this node as the one
   * that mounts it (a session from before node ids would otherwise be moved back and forth by nodes
   * with other roots). The only server on its database also adopts another node's session (the
   * host was renamed, the container re-created): nobody else could mount it.
   */
  async function claim(s: Session): Promise<Session> {
    const resources = s.resources.map((r) => (isUnder(r.hostPath, mountRoot) ? r : { ...r, hostPath: join(mountRoot, s.id, r.slug || basename(r.hostPath)) }));
    const moves = s.resources.flatMap((r, i) => (r === resources[i] ? [] : [`${r.hostPath} → ${resources[i]!.hostPath}`]));
    const adopted = !ownSession(s, nodeId);
    if (moves.length === 0 && !adopted) return s;
    const owner = adopted ? nodeId : (s.nodeId ?? nodeId);
    await storage.moveSession(s.workspaceId, s.id, resources, owner);
    if (adopted) log(`mnemo: warn: session ${s.id} was recorded by node ${s.nodeId}; this server is the only one on its database and mounts it now, as node ${nodeId}`);
    if (moves.length > 0) log(`mnemo: warn: session ${s.id} was mounted outside this server's mount root ${mountRoot}; it is mounted here now: ${moves.join(', ')}`);
    return { ...s, resources, ...(owner === null ? {} : { nodeId: owner }) };
  }

  /** Unmounts the session's stores and removes their (now empty) mount points: nothing is left under the mount root. */
  async function unmountAll(session: Session): Promise<void> {
    mounted.delete(session.id);
    for (const r of session.resources) await mounter.unmount(r.hostPath);
    await removeSessionDirs(mountRoot, session.id, session.resources.map((r) => r.hostPath), log);
  }

  /** Ends a session the caller may end (checked already), in the admin log with `why` after its stores. */
  async function end(caller: Caller, s: Session, why: string, hooks?: Pick<SessionHooks, 'record'>): Promise<Session> {
    // Another node's mounts are not here: the row ends now, and that node unmounts when it hears (or at its start).
    if (ownSession(s, nodeId)) await unmountAll(s);
    const endRow = async (tx: Storage) => {
      const ended = await tx.endSession(s.workspaceId, s.id, clock());
      await hooks?.record(ended, tx);
      return ended;
    };
    if (!audit) return storage.atomic(endRow);
    const stores = s.resources.map((r) => r.name).join(', ');
    return audit.within(storage, caller, endRow, (ended) =>
      s.status === 'ended' ? null : { action: 'session.ended', targetId: ended.id, summary: `${stores ? `mounting ${stores}` : 'no stores'}${why}` });
  }

  return {
    async createSession(caller: Caller, req: SessionRequest, hooks?: SessionHooks): Promise<Session> {
      const id = ids('session');
      const taken = new Set<string>();
      const resources: SessionResource[] = [];
      const now = clock();
      for (const [i, r] of req.resources.entries()) {
        if (r.asOf !== null) assertPast(r.asOf, now, `resources.${i}.as_of`);
        const store = await getStore(caller, r.storeId);
        // A point-in-time mount reads history, which an archived store keeps.
        if (store.archivedAt && r.asOf === null) {
          throw new MnemoError('archived', `memory store ${store.id} is archived and cannot be attached to a new session`);
        }
        const slug = uniqueSlug(slugify(store.name), taken);
        resources.push({
          type: 'memory_store',
          storeId: store.id,
          access: r.access,
          instructions: r.instructions,
          name: store.name,
          description: store.description,
          slug,
          mountPath: `${AGENT_MOUNT_ROOT}/${slug}`,
          hostPath: join(mountRoot, id, slug),
          ...(r.asOf === null ? {} : { asOf: r.asOf }),
        });
      }
      assertMayMount(caller, req.resources);
      const session: Session = {
        id,
        workspaceId: caller.workspaceId,
        status: 'active',
        resources,
        createdAt: now,
        endedAt: null,
        ...(nodeId === null ? {} : { nodeId }),
        // The key that made it: revoking the key ends the session (endSessionsOfKey).
        ...(caller.actor.type === 'api_actor' ? { createdBy: caller.actor } : {}),
      };
      await storage.atomic(async (tx) => {
        await limits(tx).assertSessionRoom(caller.workspaceId, resources.length);
        await tx.insertSession(session);
        await hooks?.record(session, tx);
      });
      try {
        await mountAll(session);
      } catch (err) {
        await unmountAll(session).catch(() => {});
        await storage.atomic(async (tx) => {
          await tx.endSession(caller.workspaceId, id, clock());
          await hooks?.forget(tx);
        });
        log(`mnemo: warn: could not mount session ${id}: ${(err as Error).message}`);
        // The host refused (a mount root that is not a usable directory, FUSE gone): not the client's fault, nor a crash.
        throw new MnemoError('mount_failed', `could not mount the session's stores: ${(err as Error).message}; the session was ended`, {}, { cause: err });
      }
      return session;
    },

    async getSession(caller: Caller, id: string): Promise<Session> {
      const s = await storage.getSession(caller.workspaceId, id);
      if (!s || !visible(caller, s)) throw notFound('session', id);
      return s;
    },

    /** With a store-limited key, pages may hold fewer than `limit` sessions; next_page still goes on. */
    async listSessions(caller: Caller, limit: number, page: string | null): Promise<Page<Session>> {
      const tag = scopeTag('sessions', caller.workspaceId);
      const p = await storage.listSessions(caller.workspaceId, limit, unbindPage(storage.pageKey(), page, tag));
      return bindPage(storage.pageKey(), { data: p.data.filter((s) => visible(caller, s)), nextPage: p.nextPage }, tag);
    },

    async endSession(caller: Caller, id: string, hooks?: Pick<SessionHooks, 'record'>): Promise<Session> {
      const s = await storage.getSession(caller.workspaceId, id);
      if (!s || !visible(caller, s)) throw notFound('session', id);
      assertMayMount(caller, s.resources);
      if (s.localPid != null && s.status === 'active') {
        // This server does not serve it: the `mnemo mount` process does, and ends it when it stops.
        throw new MnemoError('conflict', `session ${id} is served by a mnemo mount process (pid ${s.localPid}); stop that process (Ctrl-C) to end it`);
      }
      return end(caller, s, '', hooks);
    },

    /**
     * Ends the active sessions `apiKeyId` created, now that it is revoked, each as endSession ends
     * one and recorded in the admin log of the session's workspace as the revoker's act. A session
     * that cannot be ended is logged, and the others still end: the revoke has happened already.
     */
    async endSessionsOfKey(caller: Caller, apiKeyId: string): Promise<Session[]> {
      const ended: Session[] = [];
      for (const s of await storage.listActiveSessionsOfKey(apiKeyId)) {
        try {
          ended.push(await end({ ...caller, workspaceId: s.workspaceId }, s, ` (its API key ${apiKeyId} was revoked)`));
        } catch (err) {
          log(`mnemo: could not end session ${s.id} of revoked API key ${apiKeyId}: ${(err as Error).message}`);
        }
      }
      return ended;
    },

    /**
     * On start: clear mounts a crash left behind, then mount every active session again, under
     * this server's mount root (claim), except those a `mnemo mount` process serves (storage
     * leaves them out); those whose process is gone end. Another node's sessions are that node's
     * to mount (ownSession), unless this is the only server on its database.
     */
    async restore(): Promise<void> {
      await local.endStaleMounts(mounter, log);
      await mounter.clearStale(mountRoot);
      const active = (await storage.listActiveSessions()).filter((s) => soleServer || ownSession(s, nodeId));
      await sweepSessionDirs(mountRoot, new Set(active.map((s) => s.id)), log);
      for (const s of active) {
        try {
          await mountAll(await claim(s));
        } catch (err) {
          log(`mnemo: warn: could not remount session ${s.id}: ${(err as Error).message}`);
        }
      }
    },

    /**
     * Another server ended a session (the database says so already): unmount it if it is mounted
     * here. A notice about a session this server does not serve changes nothing.
     */
    async endedElsewhere(sessionId: string): Promise<void> {
      const s = mounted.get(sessionId);
      if (!s) return;
      const now = await storage.getSession(s.workspaceId, s.id);
      if (now && now.status === 'active') return;
      log(`session ${s.id} was ended by another server: unmounting it`);
      await unmountAll(s);
    },

    /**
     * Unmounts every session mounted here that the database says has ended: after the change
     * listener was away (a notice may have been lost), and in the minute sweep, to be sure.
     */
    async reconcile(): Promise<void> {
      for (const s of [...mounted.values()]) {
        const now = await storage.getSession(s.workspaceId, s.id);
        if (now && now.status === 'active') continue;
        log(`session ${s.id} has ended elsewhere: unmounting it`);
        await unmountAll(s);
      }
    },

    systemPrompt,
  };
}

export type Sessions = ReturnType<typeof createSessions>;

/**
 * Every character that ends a line for some reader of the prompt (LF, CR, VT, FF, NEL, LINE and
 * PARAGRAPH SEPARATOR), and the other control characters: a name, description or instructions
 * holding one could otherwise start a line of its own and forge a mount line (issue 11).
 */
const LINE_BREAKING = /[\p{Cc}\p{Zl}\p{Zp}]+/gu;

/** `text` folded onto one line: each run of line breaks and control characters becomes one space. */
export function foldLine(text: string): string {
  return text.replace(LINE_BREAKING, ' ');
}

/**
 * The short text an orchestrator puts into the agent's system prompt: one line per mount. The
 * fields a user chose are folded onto their line, so every line after the preamble is one mount.
 */
export function systemPrompt(session: Session): string {
  const lines = session.resources.map((r) => {
    const snapshot = r.asOf ? `, a snapshot of the store as it was at ${r.asOf}` : '';
    const parts = [`- ${r.mountPath} (${r.access}${snapshot}): ${foldLine(r.name)}`];
    if (r.description) parts.push(`: ${foldLine(r.description)}`);
    if (r.instructions) parts.push(` Instructions: ${foldLine(r.instructions)}`);
    return parts.join('');
  });
  return [
    'Memory stores are mounted as directories; read and write them with ordinary file tools.',
    'Every save is kept as a version; each mount shows every path\'s versions under its hidden .history directory (cat .history/<path>/v1). read_only mounts refuse writes.',
    ...lines,
  ].join('\n');
}

/** Whether `path` lies below `root` (both absolute). */
function isUnder(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function uniqueSlug(base: string, taken: Set<string>): string {
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
  taken.add(slug);
  return slug;
}

/**
 * @module API keys: secrets are shown once and stored only as sha256 hashes. Who may see and manage
 * which key: visibility before role, as for stores. A key is visible to a caller when it belongs
 * to the caller's acting workspace and is not above the caller's authority (an operator key is
 * visible only to operator keys). A key the caller cannot see is 404 whatever its role, so a 403
 * never reveals that a key exists elsewhere; a visible key needs an admin caller (403 otherwise).
 */
import { createHash } from 'node:crypto';
import { assertAllowed, grantOf } from '../domain/access.js';
import { MnemoError, excerpt, notFound } from '../domain/errors.js';
import { bindPage, scopeTag, unbindPage } from '../domain/page-scope.js';
import { newId, randomToken } from './ids.js';
import type { Audit } from './audit.js';
import type { Storage } from '../storage/port.js';
import type { ApiKey, Caller, Page, PageQuery, Role, Workspace } from '../domain/types.js';
import { cursorString, decodeCursor, encodeCursor } from '../storage/cursor.js';

export const KEY_PREFIX = 'mnemo-sk-';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function newSecret(): string {
  return KEY_PREFIX + randomToken(40);
}

/** What a new key is limited to, beyond its workspace and role. */
export interface KeyScope {
  /** The only stores the key may touch; absent or null: all of its workspace's. */
  storeIds?: string[] | null;
  /** An operator key that may act on any workspace (anthropic-workspace-id); admin only. */
  allWorkspaces?: boolean;
}

/** The key seeded on first start belongs to the default workspace and may act on all of them. */
const OPERATOR: KeyScope = { allWorkspaces: true };

export interface MintedKey {
  key: ApiKey;
  /** The only time the secret exists outside the caller's hands. */
  secret: string;
}

/** True when `caller` may know that `key` exists (see the module comment). */
export function keyVisible(caller: Caller, key: ApiKey): boolean {
  return key.workspaceId === caller.workspaceId && (!key.allWorkspaces || caller.grant?.operator === true);
}

/** What starting a server did to the seeded admin key. */
export interface BootstrapResult {
  /** A key minted now (generated, or MNEMO_ADMIN_KEY seen for the first time). */
  minted: MintedKey | null;
  /** The previous seeded key, revoked by --rotate-admin-key. */
  revoked: ApiKey | null;
}

/** `readable`: the service's store check (404 unless the caller sees the store), for the stores a new key is limited to. */
/** `audit`: records the keys a caller creates and revokes (the operator's CLI acts on the file and is not recorded). */
/** `revoked`: ends what a revoked key opened that outlives its requests (its sessions), as the revoking caller. */
export function createKeys(
  storage: Storage, clock: () => string, readable: (caller: Caller, storeId: string) => Promise<unknown>, audit?: Audit,
  revoked?: (caller: Caller, key: ApiKey) => Promise<unknown>,
) {
  async function defaultWorkspace(over: Storage = storage): Promise<Workspace> {
    const existing = await over.defaultWorkspace();
    if (existing) return existing;
    const ws: Workspace = { id: newId('workspace'), name: 'default', createdAt: clock() };
    await over.insertWorkspace(ws, true);
    // Another process may have made it first (its insert won, ours wrote nothing): take that one.
    return (await over.defaultWorkspace()) ?? ws;
  }

  /** `over`: the storage the key is written through (a transaction's `tx` inside one). */
  async function mint(
    workspaceId: string, name: string, role: Role, scope: KeyScope = {}, secret = newSecret(), seeded = false, over: Storage = storage,
  ): Promise<MintedKey> {
    const key: ApiKey = {
      id: newId('apiKey'),
      workspaceId,
      name,
      role,
      storeIds: scope.storeIds ?? null,
      allWorkspaces: scope.allWorkspaces ?? false,
      createdAt: clock(),
      revokedAt: null,
    };
    await over.insertApiKey(key, hashSecret(secret), seeded);
    return { key, secret };
  }

  const api = {
    defaultWorkspace,

    /**
     * Seeds the admin key of the default workspace: ONE key (storage marks it seeded). With no
     * secret, a key is generated only when no key exists at all. A secret (MNEMO_ADMIN_KEY) that is
     * the seeded key changes nothing; a different one is refused unless `rotate`
     * (--rotate-admin-key): then the seeded key is revoked and the new one takes its place, so
     * servers sharing a database with different keys cannot swap it back and forth unnoticed.
     */
    async bootstrapAdminKey(secret: string | null, rotate = false): Promise<BootstrapResult> {
      // Decided and written in one transaction under the seeding lock: servers started at once on
      // one database (PostgreSQL) take turns, and each finds what the one before it seeded.
      return storage.atomic(async (tx): Promise<BootstrapResult> => {
        await tx.lockKeySeeding();
        const ws = await defaultWorkspace(tx);
        const seeded = await tx.seededApiKey();
        if (secret === null) {
          if (rotate) throw new MnemoError('invalid_request', '--rotate-admin-key needs MNEMO_ADMIN_KEY: the new admin key');
          if (seeded || (await tx.countApiKeys()) > 0) return { minted: null, revoked: null };
          return { minted: await mint(ws.id, 'admin (generated)', 'admin', OPERATOR, newSecret(), true, tx), revoked: null };
        }
        const hash = hashSecret(secret);
        if (seeded?.hash === hash) return { minted: null, revoked: null };
        const existing = await tx.findApiKeyByHash(hash);
        if (existing?.revokedAt) {
          throw new MnemoError('invalid_request', `MNEMO_ADMIN_KEY is the secret of revoked key ${existing.id}; choose a new admin key`);
        }
        if (seeded && !rotate) {
          throw new MnemoError(
            'conflict',
            `MNEMO_ADMIN_KEY is not the admin key this database was seeded with (${seeded.key.id}); ` +
              'start once with --rotate-admin-key to revoke that key and make MNEMO_ADMIN_KEY the admin key',
          );
        }
        if (existing && (existing.role !== 'admin' || !existing.allWorkspaces)) {
          throw new MnemoError('invalid_request', `MNEMO_ADMIN_KEY is the secret of key ${existing.id}, which is not an operator key; choose a new admin key`);
        }
        const revoked = seeded ? await tx.revokeApiKey(seeded.key.workspaceId, seeded.key.id, clock()) : null;
        if (existing) {
          await tx.markApiKeySeeded(existing.id);
          return { minted: null, revoked };
        }
        return { minted: await mint(ws.id, 'admin (MNEMO_ADMIN_KEY)', 'admin', OPERATOR, secret, true, tx), revoked };
      });
    },

    /** `over`: the storage to write through (a transaction's `tx` when an audit entry joins it). */
    async createKey(name: string, role: Role, workspaceId?: string, scope: KeyScope = {}, over: Storage = storage): Promise<MintedKey> {
      // Through `over` only: inside a transaction, a call through the outer port would wait for it.
      workspaceId ??= (await defaultWorkspace(over)).id;
      if (!(await over.getWorkspace(workspaceId))) throw notFound('workspace', workspaceId);
      if (scope.allWorkspaces && role !== 'admin') {
        throw new MnemoError('invalid_request', 'only admin keys may act on all workspaces', { field: 'all_workspaces' });
      }
      if (scope.storeIds && role === 'admin') {
        throw new MnemoError('invalid_request', 'admin keys manage the whole workspace and cannot be limited to stores', { field: 'memory_store_ids' });
      }
      return mint(workspaceId, name, role, scope, newSecret(), false, over);
    },

    /**
     * A page of the keys of the caller's workspace it may see (an admin's right; operator keys only to
     * operators), oldest first: GET /v1/api_keys and the console.
     */
    async listKeyPage(caller: Caller, q: PageQuery): Promise<Page<ApiKey>> {
      assertAllowed(caller, 'manage_keys');
      const operator = caller.grant?.operator === true;
      const tag = scopeTag('api_keys', caller.workspaceId, operator);
      return bindPage(storage.pageKey(), await storage.listApiKeyPage(caller.workspaceId, { ...q, page: unbindPage(storage.pageKey(), q.page, tag) }, operator), tag);
    },

    /** One key: 404 unless visible to the caller, then 403 unless the caller is an admin. */
    async getKey(caller: Caller, id: string): Promise<ApiKey> {
      const key = await storage.getApiKey(caller.workspaceId, id);
      if (!key || !keyVisible(caller, key)) throw notFound('API key', id);
      assertAllowed(caller, 'manage_keys');
      return key;
    },

    /**
     * Revokes a key the caller may see and manage (so a plain admin cannot lock the operator out),
     * then ends what it opened (`revoked`): also when it was revoked already, so a second revoke
     * finishes what a first one cut short.
     */
    async revokeKey(caller: Caller, id: string): Promise<ApiKey> {
      const key = await api.getKey(caller, id);
      const revoke = (s: Storage) => s.revokeApiKey(key.workspaceId, key.id, clock());
      const done = !audit
        ? await revoke(storage)
        : await audit.within(storage, caller, revoke, (k) => (key.revokedAt ? null : { action: 'api_key.revoked', targetId: k.id, summary: `${k.name} (${k.role})` }));
      await revoked?.(caller, done);
      return done;
    },

    /**
     * A key made by a caller (POST /v1/api_keys): an admin's right, in the caller's acting
     * workspace; every store it is limited to must be one the caller sees.
     */
    async issueKey(caller: Caller, input: { name: string; role: Role; storeIds: string[] | null }): Promise<MintedKey> {
      assertAllowed(caller, 'manage_keys');
      for (const id of input.storeIds ?? []) {
        // A store that is not there (deleted, or never the caller's) is the request's memory_store_ids: its 404 names that field.
        await readable(caller, id).catch((err: unknown) => {
          throw err instanceof MnemoError && err.code === 'not_found' ? new MnemoError('not_found', err.message, { ...err.details, field: 'memory_store_ids' }, { cause: err }) : err;
        });
      }
      const create = (s: Storage) => api.createKey(input.name, input.role, caller.workspaceId, { storeIds: input.storeIds }, s);
      if (!audit) return create(storage);
      return audit.within(storage, caller, create, ({ key }) => ({ action: 'api_key.created', targetId: key.id, summary: `${key.name} (${key.role})` }));
    },

    async createWorkspace(name: string): Promise<Workspace> {
      const ws: Workspace = { id: newId('workspace'), name, createdAt: clock() };
      await storage.insertWorkspace(ws, false);
      return ws;
    },

    /** A workspace made by a caller (POST /v1/workspaces): operator keys only. */
    async createWorkspaceFor(caller: Caller, name: string): Promise<Workspace> {
      assertAllowed(caller, 'manage_keys');
      if (caller.grant?.operator !== true) throw new MnemoError('forbidden', 'only an operator key (all workspaces) can create workspaces');
      return api.createWorkspace(name);
    },

    /** The workspaces an admin caller may see: all of them for an operator key, else its own. */
    async listWorkspaces(caller: Caller): Promise<Workspace[]> {
      assertAllowed(caller, 'manage_keys');
      const all = await storage.listWorkspaces();
      return caller.grant?.operator === true ? all : all.filter((w) => w.id === caller.workspaceId);
    },

    /** The workspace the caller acts in, as listWorkspaces shows it (admin keys only): the console names it. */
    async actingWorkspaceOf(caller: Caller): Promise<Workspace> {
      assertAllowed(caller, 'manage_keys');
      const ws = await storage.getWorkspace(caller.workspaceId);
      if (!ws) throw notFound('workspace', caller.workspaceId);
      return ws;
    },

    /** A page of listWorkspaces (GET /v1/workspaces): the default one first, then oldest first. */
    async listWorkspacePage(caller: Caller, q: PageQuery): Promise<Page<Workspace>> {
      const tag = scopeTag('workspaces', caller.workspaceId, caller.grant?.operator === true);
      return bindPage(storage.pageKey(), pageAfterId(await api.listWorkspaces(caller), { ...q, page: unbindPage(storage.pageKey(), q.page, tag) }), tag);
    },

    /**
     * The workspace a request acts in: the key's own, or the one `anthropic-workspace-id` names. Only
     * an operator key (allWorkspaces) may name another; any other key's header must match its own.
     * `named`: where the request named it, for the refusal (the console names it in its URL).
     */
    async actingWorkspace(key: ApiKey, requested: string | undefined, named = 'anthropic-workspace-id'): Promise<string> {
      if (requested === undefined || requested === '' || requested === key.workspaceId) return key.workspaceId;
      if (!key.allWorkspaces) {
        throw new MnemoError('forbidden', `this API key belongs to another workspace than ${named} ${excerpt(requested)}`);
      }
      if (!(await storage.getWorkspace(requested))) throw notFound('workspace', requested);
      return requested;
    },

    async authenticate(secret: string | null): Promise<ApiKey> {
      if (!secret) throw new MnemoError('unauthenticated', 'missing API key: send x-api-key or Authorization: Bearer');
      return api.authenticateHash(hashSecret(secret));
    },

    /**
     * The caller as its key stands now, for a caller held past its request (an event stream): 401
     * once the key is revoked, else with the key's grant as stored. A mount's caller comes back as it is.
     */
    async current(caller: Caller): Promise<Caller> {
      if (caller.actor.type !== 'api_actor') return caller;
      const key = await storage.getApiKeyById(caller.actor.apiKeyId);
      if (!key || key.revokedAt) throw new MnemoError('unauthenticated', 'this API key was revoked');
      return { ...caller, grant: grantOf(key) };
    },

    /** The same check by the secret's hash: the web console keeps only the hash of the key it signed in with. */
    async authenticateHash(hash: string): Promise<ApiKey> {
      const key = await storage.findApiKeyByHash(hash);
      if (!key || key.revokedAt) throw new MnemoError('unauthenticated', 'invalid API key');
      return key;
    },
  };
  return api;
}

export type Keys = ReturnType<typeof createKeys>;

/**
 * A page of a list read whole, resuming after the cursor's id. Keys and workspaces are few per
 * workspace, listed in a fixed order, and never deleted (a key is revoked, and stays listed), so
 * the id a cursor names is always still there; one that is not is a cursor of another list.
 */
function pageAfterId<T extends { id: string }>(all: T[], { limit, page }: PageQuery): Page<T> {
  const cursor = decodeCursor(page);
  let start = 0;
  if (cursor) {
    const after = cursorString(cursor, 'i');
    start = all.findIndex((x) => x.id === after) + 1;
    if (start === 0) throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
  }
  const data = all.slice(start, start + limit);
  return { data, nextPage: start + limit < all.length ? encodeCursor({ i: data[data.length - 1]!.id }) : null };
}

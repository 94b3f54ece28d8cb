/** @module The keys role: workspaces and the API keys that act in them (only hashes are stored). */
import type { ApiKey, Page, PageQuery, Workspace } from '../../domain/types.js';

export interface KeyStorage {
  defaultWorkspace(): Promise<Workspace | null>;
  /**
   * `isDefault`: the default workspace, written only when there is none yet (invariant 22, a
   * partial unique index): a caller that may race another process reads `defaultWorkspace()` after.
   */
  insertWorkspace(ws: Workspace, isDefault: boolean): Promise<void>;
  getWorkspace(id: string): Promise<Workspace | null>;
  listWorkspaces(): Promise<Workspace[]>;
  /** `seeded`: the key MNEMO_ADMIN_KEY or the first start seeded (at most one unrevoked). */
  insertApiKey(key: ApiKey, hash: string, seeded?: boolean): Promise<void>;
  findApiKeyByHash(hash: string): Promise<ApiKey | null>;
  /** The unrevoked seeded admin key and its hash, or null. */
  seededApiKey(): Promise<{ key: ApiKey; hash: string } | null>;
  /** Makes an existing unrevoked key the seeded one (the caller revoked the previous one first). */
  markApiKeySeeded(id: string): Promise<void>;
  /**
   * Inside `atomic`: waits until no other server is seeding the admin key, and keeps them waiting
   * until this transaction ends, so a server's check of what is seeded and its write of a key are
   * one step (servers started at once with one MNEMO_ADMIN_KEY). SQLite: nothing (one process writes).
   */
  lockKeySeeding(): Promise<void>;
  /** Unrevoked keys of every workspace. */
  countApiKeys(): Promise<number>;
  /** Every key of a workspace (the CLI's list: it reads them all, off any server's thread). */
  listApiKeys(workspaceId: string): Promise<ApiKey[]>;
  /**
   * A page of a workspace's keys, oldest first (created_at, then id): one bounded statement, as a
   * workspace may hold many thousands. `withOperatorKeys`: also the keys that act on all workspaces.
   */
  listApiKeyPage(workspaceId: string, q: PageQuery, withOperatorKeys: boolean): Promise<Page<ApiKey>>;
  getApiKey(workspaceId: string, id: string): Promise<ApiKey | null>;
  /** The key with this id, whichever workspace holds it (an operator key acts in others): a caller's key read again. */
  getApiKeyById(id: string): Promise<ApiKey | null>;
  /** Sets revoked_at once; revoking a revoked key returns it unchanged. */
  revokeApiKey(workspaceId: string, id: string, now: string): Promise<ApiKey>;
  /**
   * A number that moves whenever a key may have been revoked, as far as this process can tell: at
   * this process's own revokes, and at another process's when it hears of them (SQLite: any commit of
   * another connection, looked for at each call; PostgreSQL: the revoke's notice, or a listener
   * that reconnected). While it cannot hear them, it moves every second or so. Whoever holds a key for
   * long (an event stream, a stdio `mnemo mcp`) reads the key again when it moves, instead of on a timer.
   */
  keyMark(): number;
}

/** @module The keys role: workspaces and the API keys that act in them (only hashes are stored). */
import type { ApiKey, Workspace } from '../../domain/types.js';

export interface KeyStorage {
  defaultWorkspace(): Promise<Workspace | null>;
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
  /** Unrevoked keys of every workspace. */
  countApiKeys(): Promise<number>;
  listApiKeys(workspaceId: string): Promise<ApiKey[]>;
  getApiKey(workspaceId: string, id: string): Promise<ApiKey | null>;
  /** Sets revoked_at once; revoking a revoked key returns it unchanged. */
  revokeApiKey(workspaceId: string, id: string, now: string): Promise<ApiKey>;
}

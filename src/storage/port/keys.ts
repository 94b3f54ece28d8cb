/** @module The keys role: workspaces and the API keys that act in them (only hashes are stored). */
import type { ApiKey, Workspace } from '../../domain/types.js';

export interface KeyStorage {
  defaultWorkspace(): Workspace | null;
  insertWorkspace(ws: Workspace, isDefault: boolean): void;
  getWorkspace(id: string): Workspace | null;
  listWorkspaces(): Workspace[];
  /** `seeded`: the key MNEMO_ADMIN_KEY or the first start seeded (at most one unrevoked). */
  insertApiKey(key: ApiKey, hash: string, seeded?: boolean): void;
  findApiKeyByHash(hash: string): ApiKey | null;
  /** The unrevoked seeded admin key and its hash, or null. */
  seededApiKey(): { key: ApiKey; hash: string } | null;
  /** Makes an existing unrevoked key the seeded one (the caller revoked the previous one first). */
  markApiKeySeeded(id: string): void;
  /** Unrevoked keys of every workspace. */
  countApiKeys(): number;
  listApiKeys(workspaceId: string): ApiKey[];
  getApiKey(workspaceId: string, id: string): ApiKey | null;
  /** Sets revoked_at once; revoking a revoked key returns it unchanged. */
  revokeApiKey(workspaceId: string, id: string, now: string): ApiKey;
}

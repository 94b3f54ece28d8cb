/**
 * @module The wire shapes (snake_case) of API keys and workspaces, in one place for both faces that
 * print them: the HTTP API (api/wire.ts) and the CLI's `--json`, so one parser reads either.
 */
import type { ApiKey, Workspace } from '../domain/types.js';

export function apiKeyJson(k: ApiKey) {
  return {
    type: 'api_key' as const,
    id: k.id,
    name: k.name,
    role: k.role,
    workspace_id: k.workspaceId,
    memory_store_ids: k.storeIds,
    all_workspaces: k.allWorkspaces,
    created_at: k.createdAt,
    revoked_at: k.revokedAt,
  };
}

export function workspaceJson(w: Workspace) {
  return { type: 'workspace' as const, id: w.id, name: w.name, created_at: w.createdAt };
}

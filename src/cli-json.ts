/**
 * @module What `--json` prints: the HTTP API's wire shapes (snake_case), so a script can read the CLI's
 * output and the API's with one parser. Mirrors api/wire.ts, which src/ may not import.
 */
import type { ApiKey, Workspace } from './types.js';

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

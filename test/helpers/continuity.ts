/**
 * @module The mnemo extensions (checkpoints, restore, search) called through the official SDK's
 * generic request methods, so errors arrive as the SDK's APIError classes like everywhere else.
 */
import type Anthropic from '@anthropic-ai/sdk';

export interface WireReference {
  memory_id: string | null;
  path: string | null;
  content_sha256: string | null;
  memory_version_id: string | null;
  note: string | null;
}

export interface WireCheckpoint {
  type: 'checkpoint';
  id: string;
  memory_store_id: string;
  agent_id: string;
  session_id: string;
  revision: number;
  locator: string;
  is_latest: boolean;
  goal: string;
  summary: string;
  constraints: string[];
  decisions: string[];
  open_tasks: string[];
  next_action: string | null;
  capsule: string;
  references: WireReference[];
  size_bytes: number;
  created_at: string;
}

export interface WireRestore {
  type: 'checkpoint_restore';
  checkpoint_id: string;
  revision: number;
  locator: string;
  goal: string;
  capsule: string;
  constraints: string[];
  decisions: string[];
  open_tasks: string[];
  next_action: string | null;
  summary: string | null;
  references: (WireReference & { status: 'ok' | 'changed' | 'missing' | 'expired'; current: { memory_id: string; path: string; content_sha256: string; memory_version_id: string } | null })[];
  omitted: string[];
  size_bytes: number;
  max_bytes: number;
}

export interface WireSearchHit {
  type: 'search_result';
  memory: { id: string; path: string; content_sha256: string };
  snippet: string;
  score: number;
}

export type CheckpointBody = Partial<Omit<WireCheckpoint, 'references'>> & {
  agent_id: string;
  session_id: string;
  goal: string;
  references?: Partial<WireReference>[];
  expected_latest_checkpoint_id?: string | null;
};

export function extensions(client: Anthropic) {
  const base = (store: string) => `/v1/memory_stores/${store}`;
  return {
    checkpoint: (store: string, body: CheckpointBody) => client.post<WireCheckpoint>(`${base(store)}/checkpoints`, { body }),
    getCheckpoint: (store: string, id: string) => client.get<WireCheckpoint>(`${base(store)}/checkpoints/${id}`),
    latest: (store: string, agent: string, session: string) =>
      client.get<WireCheckpoint>(`${base(store)}/checkpoints/sessions/${agent}/${session}/latest`),
    deleteCheckpoint: (store: string, id: string) => client.delete<{ id: string; type: string }>(`${base(store)}/checkpoints/${id}`),
    restore: (store: string, id: string, body: { max_bytes?: number } = {}) =>
      client.post<WireRestore>(`${base(store)}/checkpoints/${id}/restore`, { body }),
    restoreLatest: (store: string, agent: string, session: string, body: { max_bytes?: number } = {}) =>
      client.post<WireRestore>(`${base(store)}/checkpoints/sessions/${agent}/${session}/restore`, { body }),
    search: (store: string, query: Record<string, string | number>) =>
      client.get<{ data: WireSearchHit[]; next_page: string | null; candidates_capped: boolean }>(`${base(store)}/search`, { query }),
  };
}

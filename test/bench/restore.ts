/**
 * @module Checkpoint figures for the bench (issue 6): latency of saving a checkpoint and of
 * restoring the latest within the default 32 KiB budget, on a realistic bundle with references
 * to live memories (so each restore also checks every reference's status).
 */
import type { Api, LoadResult } from './http.js';
import { load } from './http.js';

export interface RestoreFigures {
  checkpoint: LoadResult;
  restore: LoadResult;
}

/** Seeds `references` memories in `storeId`, then times `total` checkpoints and `total` restores from one client. */
export async function restoreFigures(api: Api, storeId: string, { total = 200, references = 32 } = {}): Promise<RestoreFigures> {
  const base = `/v1/memory_stores/${storeId}`;
  const refs: { path: string; content_sha256: string; note: string }[] = [];
  for (let i = 0; i < references; i++) {
    const m = await api.call<{ path: string; content_sha256: string }>('POST', `${base}/memories`, {
      path: `/bench-ckpt/record-${i}.md`,
      content: `record ${i}\n`.repeat(20),
    });
    refs.push({ path: m.path, content_sha256: m.content_sha256, note: `why record ${i} matters` });
  }
  const bundle = {
    agent_id: 'bench-agent',
    session_id: 'bench-session',
    goal: 'Keep working after compaction',
    summary: 'x'.repeat(8 * 1024),
    constraints: Array.from({ length: 10 }, (_, i) => `constraint ${i}: never do thing ${i}`),
    decisions: Array.from({ length: 10 }, (_, i) => `decision ${i}: chose option ${i}`),
    open_tasks: Array.from({ length: 10 }, (_, i) => `task ${i}`),
    next_action: 'continue with task 0',
    capsule: 'c'.repeat(4 * 1024),
    references: refs,
  };
  const checkpoint = await load(1, total, () => api.call('POST', `${base}/checkpoints`, bundle));
  const restore = await load(1, total, () => api.call('POST', `${base}/checkpoints/sessions/bench-agent/bench-session/restore`, {}));
  return { checkpoint, restore };
}

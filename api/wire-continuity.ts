/** @module Checkpoints, restores and search hits → wire JSON (mnemo extensions, snake_case like the rest). */
import {
  checkpointLocator,
  type Checkpoint,
  type CheckpointReference,
  type Restored,
  type RestoredReference,
  type SearchHit,
  type SearchPage,
} from '../src/index.js';
import { toWireActor, toWireMemory } from './wire.js';

function toWireReference(r: CheckpointReference) {
  return { memory_id: r.memoryId, path: r.path, content_sha256: r.contentSha256, memory_version_id: r.versionId, note: r.note };
}

export function toWireCheckpoint(c: Checkpoint) {
  return {
    type: 'checkpoint' as const,
    id: c.id,
    memory_store_id: c.storeId,
    agent_id: c.agentId,
    session_id: c.sessionId,
    revision: c.revision,
    locator: checkpointLocator(c.storeId, c.id),
    is_latest: c.isLatest,
    goal: c.goal,
    summary: c.summary,
    constraints: c.constraints,
    decisions: c.decisions,
    open_tasks: c.openTasks,
    next_action: c.nextAction,
    capsule: c.capsule,
    references: c.references.map(toWireReference),
    size_bytes: c.sizeBytes,
    created_at: c.createdAt,
    created_by: toWireActor(c.createdBy),
  };
}

function toWireRestoredReference(r: RestoredReference) {
  return {
    ...toWireReference(r),
    status: r.status,
    current: r.current && {
      memory_id: r.current.memoryId,
      path: r.current.path,
      content_sha256: r.current.contentSha256,
      memory_version_id: r.current.versionId,
    },
  };
}

export function toWireRestore(r: Restored) {
  const c = r.checkpoint;
  return {
    type: 'checkpoint_restore' as const,
    checkpoint_id: c.id,
    // The store is in the locator; restores keep their fixed overhead small to fit tight budgets.
    agent_id: c.agentId,
    session_id: c.sessionId,
    revision: c.revision,
    locator: r.locator,
    created_at: c.createdAt,
    goal: c.goal,
    capsule: c.capsule,
    constraints: c.constraints,
    decisions: c.decisions,
    open_tasks: c.openTasks,
    next_action: c.nextAction,
    references: r.references.map(toWireRestoredReference),
    summary: r.summary,
    omitted: r.omitted,
    size_bytes: r.sizeBytes,
    max_bytes: r.maxBytes,
  };
}

/** The byte size of a restore as the wire renders it: what the budget limits. */
export function restoreWireBytes(r: Restored): number {
  return Buffer.byteLength(JSON.stringify(toWireRestore(r)), 'utf8');
}

export function toWireSearchHit(h: SearchHit) {
  return { type: 'search_result' as const, memory: toWireMemory(h.memory, 'basic'), snippet: h.snippet, score: h.score };
}

/** A list page plus candidates_capped (our extension; see the README's "Search"). */
export function toWireSearchPage(p: SearchPage) {
  return { data: p.data.map(toWireSearchHit), next_page: p.nextPage, candidates_capped: p.candidatesCapped };
}

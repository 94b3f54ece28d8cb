/** @module Domain → wire JSON, exactly as @anthropic-ai/sdk's beta.memoryStores types declare it. */
import type { Actor, AdminAction, Memory, MemoryListItem, MemoryMeta, MemoryVersion, Page, Session, Store, TextHolders, View } from '../src/index.js';

export function toWireActor(a: Actor) {
  return a.type === 'api_actor'
    ? { type: 'api_actor' as const, api_key_id: a.apiKeyId }
    : { type: 'session_actor' as const, session_id: a.sessionId };
}

export function toWireStore(s: Store) {
  return {
    type: 'memory_store' as const,
    id: s.id,
    name: s.name,
    description: s.description,
    metadata: s.metadata,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    archived_at: s.archivedAt,
    // mnemo's retention extension: present only on stores that prune, so other shapes stay the SDK's.
    ...(s.retention ? { retention: { max_age_days: s.retention.maxAgeDays, keep_last: s.retention.keepLast } } : {}),
    // mnemo's fork extension: present only on forks, for the same reason.
    ...(s.forkedFrom ? { forked_from: { memory_store_id: s.forkedFrom.storeId, as_of: s.forkedFrom.asOf } } : {}),
  };
}

export function toWireMemory(m: MemoryMeta & { content?: string }, view: View) {
  return {
    type: 'memory' as const,
    id: m.id,
    memory_store_id: m.storeId,
    path: m.path,
    content: view === 'full' ? (m as Memory).content : null,
    content_sha256: m.contentSha256,
    content_size_bytes: m.contentSizeBytes,
    memory_version_id: m.versionId,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    // mnemo's TTL extension: present only on memories that expire, so other shapes stay the SDK's.
    ...(m.expiresAt ? { expires_at: m.expiresAt } : {}),
  };
}

export function toWireListItem(item: MemoryListItem, view: View) {
  return item.type === 'memory_prefix' ? { type: 'memory_prefix' as const, path: item.path } : toWireMemory(item.memory, view);
}

export function toWireVersion(v: MemoryVersion, view: View) {
  return {
    type: 'memory_version' as const,
    id: v.id,
    memory_store_id: v.storeId,
    memory_id: v.memoryId,
    operation: v.operation,
    path: v.path,
    content: view === 'full' ? v.content : null,
    content_sha256: v.contentSha256,
    content_size_bytes: v.contentSizeBytes,
    created_at: v.createdAt,
    created_by: toWireActor(v.createdBy),
    redacted_at: v.redactedAt,
    redacted_by: v.redactedBy ? toWireActor(v.redactedBy) : null,
  };
}

/**
 * mnemo extensions, additive, on a redaction's first answer only (read once it has committed): how
 * many other versions still hold the same text, and which.
 */
export function toWireRedactionHolders(h: TextHolders) {
  return { content_still_held_by: h.count, content_still_held_in: toWireTextHolders(h) };
}

/** mnemo extension, beside `content_still_held_by` on a redaction's first answer: which versions still hold the text. */
export function toWireTextHolders(h: TextHolders) {
  return {
    data: h.data.map((v) => ({
      id: v.id,
      memory_store_id: v.storeId,
      memory_id: v.memoryId,
      path: v.path,
      created_at: v.createdAt,
      current: v.current,
    })),
    has_more: h.hasMore,
  };
}

export function toWireSession(s: Session, systemPrompt: string) {
  return {
    type: 'session' as const,
    id: s.id,
    status: s.status,
    resources: s.resources.map((r) => ({
      type: 'memory_store' as const,
      memory_store_id: r.storeId,
      access: r.access,
      instructions: r.instructions,
      name: r.name,
      description: r.description,
      mount_path: r.mountPath,
      host_path: r.hostPath,
      as_of: r.asOf ?? null,
    })),
    system_prompt: systemPrompt,
    created_at: s.createdAt,
    ended_at: s.endedAt,
    node_id: s.nodeId ?? null,
    created_by: s.createdBy ? toWireActor(s.createdBy) : null,
  };
}

export function toWireAdminAction(a: AdminAction) {
  return {
    type: 'admin_action' as const,
    id: a.id,
    action: a.action,
    actor: toWireActor(a.actor),
    target_id: a.targetId,
    memory_store_id: a.storeId,
    summary: a.summary,
    created_at: a.createdAt,
  };
}

export function toWirePage<T, W>(page: Page<T>, map: (item: T) => W) {
  return { data: page.data.map(map), next_page: page.nextPage };
}

export { apiKeyJson as toWireApiKey, workspaceJson as toWireWorkspace } from '../src/index.js';

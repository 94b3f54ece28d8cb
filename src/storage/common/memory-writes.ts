/**
 * @module What both adapters' memory writes compute before and after their SQL (sqlite/memories.ts,
 * postgres/memories.ts): the memory a create makes, the memory a versioned update leaves, and the
 * updates a save by path and a directory move come down to. The rules they apply are the domain's
 * (src/domain/memory-attrs.ts, memory-updates.ts, memory-rules.ts); the adapter reads, checks
 * overlap and writes its rows.
 */
import { byteLength, sha256Hex } from '../../domain/content.js';
import { attrsAfterVersion, attrsOfNewMemory } from '../../domain/memory-attrs.js';
import { movedPath } from '../../domain/memory-rules.js';
import type { UpdatePlan } from '../../domain/memory-updates.js';
import type { KeptAttrs, Memory } from '../../domain/types.js';
import type * as port from '../port.js';
import { msToUs, toMemory, type MemoryRow } from './rows.js';
import { writeVersionRow, type VersionRowInput } from './version-rows.js';

/** The memory a create makes: measured content, the expiry asked for, the attributes it keeps. */
export function newMemory(input: port.CreateMemoryInput & { attrs?: KeptAttrs }): Memory {
  return {
    id: input.memoryId, storeId: input.storeId, path: input.path, content: input.content,
    contentSha256: sha256Hex(input.content), contentSizeBytes: byteLength(input.content), versionId: input.versionId,
    createdAt: input.now, updatedAt: input.now, expiresAt: input.expiresAt ?? null, ...attrsOfNewMemory(input.attrs, input.mode),
  };
}

/** The memory a versioned update (`plan` a write) leaves, with the expiry it keeps or sets. */
export function updatedMemory(current: Memory, plan: Extract<UpdatePlan, { kind: 'write' }>, input: port.UpdateMemoryInput, expiresAt: string | null): Memory {
  const kept = attrsAfterVersion(current, plan.content !== current.content, input.attrs);
  return {
    ...current, path: plan.path, content: plan.content, contentSha256: plan.sha256,
    contentSizeBytes: plan.size, versionId: input.versionId, updatedAt: input.now, expiresAt, ...kept,
  };
}

/** A save by path onto the memory already there: an update of it, keeping the mode the save carries. */
export function saveAsUpdate(input: port.SaveMemoryAtInput, memoryId: string): port.UpdateMemoryInput {
  const attrs = input.mode === undefined ? input.attrs : { ...input.attrs, mode: input.mode };
  return { ...input, memoryId, ...(attrs ? { attrs } : {}) };
}

/** One memory's part in a directory move: an update to its path below `to`, with a fresh version id. */
export function treeMoveUpdate(input: port.MoveTreeInput, row: Pick<MemoryRow, 'id' | 'path'>): port.UpdateMemoryInput {
  const path = movedPath(input.from, input.to, row.path);
  return { actor: input.actor, now: input.now, versionId: input.versionIds(), storeId: input.storeId, memoryId: row.id, path };
}

/**
 * One memory of a directory move whose destination no other memory holds (so no overlap to check):
 * the rename of it, built from its row without its text (META). The version names the text by sha
 * and stores none (`content` null): the text is already there.
 */
export function treeMoveOf(input: port.MoveTreeInput, row: MemoryRow): { memory: Memory; version: VersionRowInput } {
  const current = toMemory(row);
  const u = treeMoveUpdate(input, row);
  const plan = { kind: 'write', path: u.path!, content: current.content, sha256: current.contentSha256, size: current.contentSizeBytes, renamed: true } as const;
  const memory = updatedMemory(current, plan, u, current.expiresAt);
  return { memory, version: { ...writeVersionRow(u, 'modified', memory), content: null } };
}

/** A kept time in the row's unit (integer microseconds), or NULL. */
export function us(ms: number | null): number | null {
  return ms === null ? null : msToUs(ms);
}

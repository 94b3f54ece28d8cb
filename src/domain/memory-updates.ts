/** @module Memory rules that do not need storage: what an update means, and the errors it raises. */
import { byteLength, MAX_CONTENT_BYTES, sha256Hex } from './content.js';
import { MnemoError } from './errors.js';
import type { Memory } from './types.js';

export type UpdatePlan =
  | { kind: 'noop' }
  | { kind: 'write'; path: string; content: string; sha256: string; size: number; renamed: boolean };

/**
 * Decides what an update does to `current`. A precondition that fails is forgiven when the memory
 * already holds exactly what was asked, its expiry included (so retries are idempotent, and a stale
 * caller cannot set or clear the expiry of content it never saw); an update that changes neither
 * content nor path is a no-op and adds no version (an expiry is not versioned).
 *
 * `appended`: the update only appends these characters to the text `expectedSha256` names (a
 * mount's append, `content` being that text with them after it). When the memory holds other text
 * by now, another writer's save landed first: the precondition does not fail, and the update is
 * the memory's text as it now stands with `appended` after it. Decided on the row the write read
 * under the store's lock, so no append is lost or kept twice, and none waits for another's.
 */
export function planUpdate(
  current: Memory,
  req: { content?: string; path?: string; expiresAt?: string | null | undefined; expectedSha256?: string | undefined; appended?: string | undefined },
): UpdatePlan {
  const path = req.path ?? current.path;
  const stale = req.expectedSha256 !== undefined && req.expectedSha256 !== current.contentSha256;
  const content = stale && req.appended !== undefined ? appendedTo(current, req.appended) : (req.content ?? current.content);
  const unchanged = path === current.path && content === current.content;
  const inPlace = unchanged && (req.expiresAt === undefined || req.expiresAt === current.expiresAt);
  if (stale && req.appended === undefined && !inPlace) {
    throw preconditionFailed(current.id);
  }
  if (unchanged) return { kind: 'noop' };
  const sha256 = content === current.content ? current.contentSha256 : sha256Hex(content);
  return { kind: 'write', path, content, sha256, size: byteLength(content), renamed: path !== current.path };
}

/** The memory's text with an append after it, refused as any content over the limit is. */
function appendedTo(current: Memory, appended: string): string {
  const content = current.content + appended;
  const bytes = byteLength(content);
  if (bytes > MAX_CONTENT_BYTES) {
    throw new MnemoError(
      'content_too_large',
      `content is ${bytes} bytes with the append after memory ${current.id}'s newest text; the limit is ${MAX_CONTENT_BYTES} bytes of UTF-8`,
      { field: 'content' },
    );
  }
  return content;
}

export function assertDeletePrecondition(current: Memory, expectedSha256: string | undefined): void {
  if (expectedSha256 !== undefined && expectedSha256 !== current.contentSha256) throw preconditionFailed(current.id);
}

export function preconditionFailed(memoryId: string): MnemoError {
  return new MnemoError(
    'precondition_failed',
    `memory ${memoryId} does not have the expected content_sha256; retrieve it and retry`,
  );
}

export function pathConflict(requested: string, conflicting: { path: string; id: string }): MnemoError {
  const how =
    conflicting.path === requested
      ? 'is already used by'
      : conflicting.path.startsWith(requested + '/')
        ? 'is an ancestor of the path of'
        : 'is below the path of';
  return new MnemoError('path_conflict', `path ${requested} ${how} memory ${conflicting.id} (${conflicting.path})`, {
    conflicting_path: conflicting.path,
    conflicting_memory_id: conflicting.id,
  });
}

export function archivedStore(storeId: string): MnemoError {
  return new MnemoError('archived', `memory store ${storeId} is archived: its memories and settings can no longer change`);
}

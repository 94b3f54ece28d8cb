/**
 * @module Unified diffs between two versions of a store (issue 15), made by the `diff` package.
 * `against` defaults to the same memory's previous version, or empty content for its first; any
 * version of the same store may be named (two memories can be compared). A deleted version reads as
 * empty content. A redacted side has no content left to compare: 409 conflict_error naming it.
 * The diff's cost is bounded (domain/line-diff.ts): past its budget it is correct but not minimal.
 * It runs on the diff thread (diff-thread.ts), never on the thread that serves the mounts.
 */
import { MnemoError, notFound } from '../domain/errors.js';
import type { Caller, MemoryVersion, Store, VersionDiff } from '../domain/types.js';
import type { Storage } from '../storage/port.js';
import type { DiffThread } from './diff-thread.js';

export interface DiffOptions {
  storage: Pick<Storage, 'getVersion' | 'previousVersion'>;
  readable: (caller: Caller, storeId: string) => Store | Promise<Store>;
  /** Where the diff itself runs: off the serving thread (diff-thread.ts). */
  thread: DiffThread;
}

export function createDiffs({ storage, readable, thread }: DiffOptions) {
  async function found(storeId: string, id: string): Promise<MemoryVersion> {
    const v = await storage.getVersion(storeId, id);
    if (!v) throw notFound('memory version', id);
    return v;
  }

  return async function diffVersion(caller: Caller, storeId: string, versionId: string, against: string | null): Promise<VersionDiff> {
    await readable(caller, storeId);
    const to = await found(storeId, versionId);
    const from = against === null ? await storage.previousVersion(storeId, versionId) : await found(storeId, against);
    assertReadable(to, 'version');
    if (from) assertReadable(from, 'against');
    const { unified, minimal } = await thread.run({
      kind: 'patch', from: text(from), to: text(to), fromName: from?.path ?? '/dev/null', toName: to.path ?? '/dev/null', fromHeader: from?.id ?? '', toHeader: to.id, context: CONTEXT_LINES,
    });
    return { from, to, unified, minimal };
  };
}

/** Unchanged lines around each change: the `diff` package's default for createTwoFilesPatch. */
const CONTEXT_LINES = 4;

function text(v: MemoryVersion | null): string {
  return v === null || v.operation === 'deleted' ? '' : (v.content ?? '');
}

function assertReadable(v: MemoryVersion, field: 'version' | 'against'): void {
  if (v.redactedAt !== null) {
    throw new MnemoError('conflict', `memory version ${v.id} is redacted: it has no content to diff`, { field });
  }
}

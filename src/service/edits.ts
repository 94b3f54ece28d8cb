/**
 * @module An edit of a memory's text (MCP memory_edit): read it, apply the edit, write the result
 * only if the memory still holds what was read. A caller who named the content it expects gets a
 * precondition failure when it changed. One who did not has the edit applied again to a fresh
 * read, a bounded number of times: edits of one path in this process take turns (they would
 * otherwise all read the same text and all but one lose), and a change by another process is
 * waited out for a random, growing moment before the next read.
 */
import { MnemoError, excerpt, isMnemoError } from '../domain/errors.js';
import { applyEdit, type MemoryEdit } from '../domain/text-edits.js';
import type { Caller, Memory, MemoryWrite } from '../domain/types.js';

/**
 * Attempts of an edit whose caller set no content_sha256, each on a fresh read, before it gives up.
 * 40 inserts at once from four clients over three processes lost a second attempt about once in
 * 20 edits, so eight make giving up rare while bounding the wait (under half a second).
 */
export const EDIT_ATTEMPTS = 8;
/** The longest wait before the second attempt (ms); it doubles for each one after, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 10;
const MAX_BACKOFF_MS = 100;

export interface EditDeps {
  getMemoryToWrite(caller: Caller, storeId: string, path: string): Promise<Memory | null>;
  updateMemory(caller: Caller, storeId: string, memoryId: string, write: MemoryWrite): Promise<Memory>;
}

export function createEdit({ getMemoryToWrite, updateMemory }: EditDeps) {
  const turns = new Map<string, Promise<void>>();

  /** Runs `fn` once the edits of `key` queued before it have settled. */
  async function inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = turns.get(key) ?? Promise.resolve();
    let done!: () => void;
    const tail = before.then(() => new Promise<void>((resolve) => (done = resolve)));
    turns.set(key, tail);
    await before;
    try {
      return await fn();
    } finally {
      done();
      if (turns.get(key) === tail) turns.delete(key);
    }
  }

  async function attempt(caller: Caller, storeId: string, path: string, edit: MemoryEdit, expectedSha256: string | undefined): Promise<Memory> {
    for (let n = 1; ; n++) {
      const m = await getMemoryToWrite(caller, storeId, path);
      if (!m) throw new MnemoError('not_found', `no memory at ${excerpt(path)}`);
      const content = applyEdit(m.content, edit);
      try {
        // The edit applies to what was read: a concurrent change fails the write instead of being overwritten.
        return await updateMemory(caller, storeId, m.id, { content, expectedSha256: expectedSha256 ?? m.contentSha256 });
      } catch (err) {
        if (expectedSha256 !== undefined || !isMnemoError(err) || err.code !== 'precondition_failed') throw err;
        if (n >= EDIT_ATTEMPTS) {
          throw new MnemoError(
            'conflict',
            `memory ${m.id} kept changing while the edit was applied (${EDIT_ATTEMPTS} attempts, each on a fresh read); retry the edit`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (n - 1))));
      }
    }
  }

  return function editMemory(caller: Caller, storeId: string, path: string, edit: MemoryEdit, expectedSha256?: string): Promise<Memory> {
    return inTurn(`${storeId}\0${path}`, () => attempt(caller, storeId, path, edit, expectedSha256));
  };
}

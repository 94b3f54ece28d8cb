/**
 * @module A write of a memory's whole content at a path, created if none is there (MCP
 * memory_write): an upsert. It reads the path, then creates or replaces; another writer can make
 * that read stale before the write lands (two agents, or one agent's parallel tool calls, writing
 * the same new path), so a create that finds a memory created meanwhile at exactly its path, or a
 * replace whose memory was deleted meanwhile, reads the path again and writes what it finds there,
 * as the one operation the caller asked for would. A content_sha256 keeps its meaning: the write
 * happens only over that content, never retried onto other content.
 */
import { MnemoError, excerpt, isMnemoError } from '../domain/errors.js';
import type { Caller, Expiry, Memory, MemoryWrite } from '../domain/types.js';

/** Reads of the path before the write gives up: each retry follows another writer's create or delete of that very path. */
export const WRITE_ATTEMPTS = 4;

export interface PathWrite {
  path: string;
  content: string;
  expiry?: Expiry;
  /** The content_sha256 the memory must still have; with it, a path holding no memory fails. */
  expectedSha256?: string;
}

export interface WriteDeps {
  getMemoryToWrite(caller: Caller, storeId: string, path: string): Promise<Memory | null>;
  createMemory(caller: Caller, storeId: string, input: { path: string; content: string; expiry?: Expiry }): Promise<Memory>;
  updateMemory(caller: Caller, storeId: string, memoryId: string, write: MemoryWrite): Promise<Memory>;
}

export function createWrite({ getMemoryToWrite, createMemory, updateMemory }: WriteDeps) {
  return async function writeMemory(caller: Caller, storeId: string, w: PathWrite): Promise<Memory> {
    const { expectedSha256, ...input } = w;
    for (let n = 1; ; n++) {
      const last = n >= WRITE_ATTEMPTS;
      const m = await getMemoryToWrite(caller, storeId, w.path);
      if (!m) {
        if (expectedSha256 !== undefined) {
          throw new MnemoError('precondition_failed', `no memory at ${excerpt(w.path)}, so it cannot have content_sha256 ${expectedSha256}`);
        }
        try {
          return await createMemory(caller, storeId, input);
        } catch (err) {
          if (last || !isMnemoError(err) || err.code !== 'path_conflict' || err.details.conflicting_path !== w.path) throw err;
        }
      } else {
        const write: MemoryWrite = { content: w.content, ...(w.expiry === undefined ? {} : { expiry: w.expiry }) };
        if (expectedSha256 !== undefined) write.expectedSha256 = expectedSha256;
        try {
          return await updateMemory(caller, storeId, m.id, write);
        } catch (err) {
          if (last || expectedSha256 !== undefined || !isMnemoError(err) || err.code !== 'not_found') throw err;
        }
      }
    }
  };
}

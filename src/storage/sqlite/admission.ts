/**
 * @module The SQLite adapter's part of a memory write's admission (port/memories.ts `Admission`)
 * and of a retrieve's lookups: the store, its usage and the target are read on the one connection
 * just before the write, in the same synchronous call, so no other write can come between (one
 * connection, one JS thread). The writes themselves (memories.ts) are unchanged, and so is what the
 * write-behind journal replays: its writes carry no admission (sqlite/write-behind.ts).
 */
import type { Admission, WriteFound } from '../port.js';
import type { ConnectionMethods } from './port-view.js';
import type { StoreStatements } from './stores.js';

type Admitted = 'createMemory' | 'updateMemory' | 'deleteMemory' | 'saveMemoryAt' | 'moveMemory' | 'setMemoryAttrs';
type Parts = Pick<ConnectionMethods, Admitted | 'storeUsage' | 'liveStoreUsage' | 'getMemory' | 'getMemoryMetaById' | 'getMemoryMetaByPath'> & Pick<StoreStatements, 'storeShown'>;

export function admittedWrites(c: Parts): Pick<ConnectionMethods, Admitted | 'getMemoryInStore'> {
  /**
   * Shows the service's admission what the write finds; `target`: the memory it replaces, by id or
   * (a save) by path. The target is read only if the rules ask for it (near a limit): on most
   * writes they do not, and then only its metadata (by id or by path), never its text.
   */
  function admit(input: { storeId: string; admission?: Admission }, target?: { id: string } | { path: string }): void {
    const a = input.admission;
    if (!a) return;
    let found: { target: WriteFound['target'] } | undefined;
    const find = (): WriteFound['target'] => {
      if (target === undefined) return null;
      const m = 'id' in target ? c.getMemoryMetaById(input.storeId, target.id) : c.getMemoryMetaByPath(input.storeId, target.path);
      return m && { contentSizeBytes: m.contentSizeBytes };
    };
    const usage = c.storeUsage(input.storeId);
    a.admit({
      storeFound: c.storeShown(a.workspaceId, input.storeId),
      // Near a limit only: the counter less the expired memories the write's purge may not reach.
      usage: a.nearLimit?.(usage) ? c.liveStoreUsage(input.storeId) : usage,
      // Found once, when first read; `admit` reads it before the write, in this same call.
      get target() {
        return (found ??= { target: find() }).target;
      },
    });
  }
  return {
    createMemory(input) {
      admit(input);
      return c.createMemory(input);
    },
    updateMemory(input) {
      admit(input, { id: input.memoryId });
      return c.updateMemory(input);
    },
    deleteMemory(input) {
      admit(input, { id: input.memoryId });
      return c.deleteMemory(input);
    },
    saveMemoryAt(input) {
      admit(input, { path: input.path });
      return c.saveMemoryAt(input);
    },
    moveMemory(input) {
      admit(input, { id: input.memoryId });
      return c.moveMemory(input);
    },
    setMemoryAttrs(storeId, id, attrs, now, admission) {
      admit({ storeId, admission });
      return c.setMemoryAttrs(storeId, id, attrs, now);
    },
    getMemoryInStore(workspaceId, storeId, id) {
      const storeFound = c.storeShown(workspaceId, storeId);
      return { storeFound, memory: storeFound ? c.getMemory(storeId, id) : null };
    },
  };
}

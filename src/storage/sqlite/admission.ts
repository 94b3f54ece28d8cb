/**
 * @module The SQLite adapter's part of a memory write's admission (port/memories.ts `Admission`)
 * and of a retrieve's lookups: the store, its usage and the target are read on the one connection
 * just before the write, in the same synchronous call, so no other write can come between (one
 * connection, one JS thread). The writes themselves (memories.ts) are unchanged.
 */
import type { Admission } from '../port.js';
import type { ConnectionMethods } from './port-view.js';

type Parts = Pick<ConnectionMethods, 'createMemory' | 'updateMemory' | 'deleteMemory' | 'getStore' | 'storeUsage' | 'getMemory'>;

export function admittedWrites(c: Parts): Pick<ConnectionMethods, 'createMemory' | 'updateMemory' | 'deleteMemory' | 'getMemoryInStore'> {
  /** Shows the service's admission what the write finds; `memoryId`: the memory an update or a delete replaces. */
  function admit(input: { storeId: string; admission?: Admission }, memoryId?: string): void {
    const a = input.admission;
    if (!a) return;
    const store = c.getStore(a.workspaceId, input.storeId);
    const m = memoryId === undefined ? null : c.getMemory(input.storeId, memoryId);
    a.admit({ store, usage: c.storeUsage(input.storeId), target: m && { contentSizeBytes: m.contentSizeBytes } });
  }
  return {
    createMemory(input) {
      admit(input);
      return c.createMemory(input);
    },
    updateMemory(input) {
      admit(input, input.memoryId);
      return c.updateMemory(input);
    },
    deleteMemory(input) {
      admit(input, input.memoryId);
      return c.deleteMemory(input);
    },
    getMemoryInStore(workspaceId, storeId, id) {
      const store = c.getStore(workspaceId, storeId);
      return { store, memory: store ? c.getMemory(storeId, id) : null };
    },
  };
}

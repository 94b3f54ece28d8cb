/** @module What both adapters' walks of a store's path tree yield (sqlite/tree.ts, postgres/tree.ts). */
import type { MemoryRow } from './rows.js';

/** A direct child of a directory, and the cursor that resumes a listing after it. */
export type Child =
  | { item: { type: 'memory'; row: MemoryRow }; resume: { k: string; x: number } }
  | { item: { type: 'memory_prefix'; path: string }; resume: { k: string; x: number } };

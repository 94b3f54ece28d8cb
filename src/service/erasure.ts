/**
 * @module Erasing what the search index took out without erasing it (sqlite/schema/search-remnants.ts),
 * after a redaction or a prune made that due: step by step, a turn of the event loop apart, so the
 * mounts and requests are served between steps, and to the end before the redaction or prune answers.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Storage } from '../storage/port.js';

export async function eraseSearchRemnants(storage: Pick<Storage, 'eraseSearchRemnants'>): Promise<void> {
  if (!storage.eraseSearchRemnants) return;
  while (await storage.eraseSearchRemnants()) await nextTurn();
}

/** @module What a redaction may do, decided from the version row and its memory's head as the adapter found them. */
import { MnemoError, notFound } from './errors.js';

/** `redact`: erase it now; `already`: it was redacted before, and is returned as it stands. */
export type RedactionPlan = 'redact' | 'already';

/**
 * A version that is the head of a live memory is its current text, which only an update or delete
 * may change: redacting it is a conflict. Redacting twice keeps the first redaction.
 */
export function planRedaction(
  versionId: string,
  version: { memoryId: string; redactedAt: string | null } | null,
  isHeadOfLiveMemory: boolean,
): RedactionPlan {
  if (!version) throw notFound('memory version', versionId);
  if (version.redactedAt) return 'already';
  if (isHeadOfLiveMemory) {
    throw new MnemoError(
      'conflict',
      `memory version ${versionId} is the current version of live memory ${version.memoryId}; update or delete the memory first`,
    );
  }
  return 'redact';
}

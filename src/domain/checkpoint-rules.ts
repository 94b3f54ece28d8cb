/** @module The latest-pointer rules of checkpoints, decided from the rows the adapter read in its transaction. */
import { MnemoError, notFound } from './errors.js';

/** The (agent, session) latest pointer as stored: null when the pair has no checkpoint yet. */
export interface CheckpointHead {
  checkpointId: string;
  revision: number;
}

/**
 * The revision a new checkpoint of (agent, session) takes. `expectedLatestId` guards against a
 * lost update: undefined means no guard, null that there must be no checkpoint yet, an id that it
 * must be the latest.
 */
export function nextRevision(
  who: { agentId: string; sessionId: string },
  head: CheckpointHead | null,
  expectedLatestId: string | null | undefined,
): number {
  if (expectedLatestId !== undefined && expectedLatestId !== (head?.checkpointId ?? null)) {
    throw new MnemoError(
      'conflict',
      `the latest checkpoint of agent ${who.agentId} session ${who.sessionId} is ${head?.checkpointId ?? 'none'}, ` +
        `not ${expectedLatestId ?? 'none'} as expected_latest_checkpoint_id says; restore the latest and retry`,
      { field: 'expected_latest_checkpoint_id' },
    );
  }
  return (head?.revision ?? 0) + 1;
}

/** The latest checkpoint of its (agent, session) is what a restore finds: it stays until a newer one exists. */
export function assertCheckpointDeletable(
  id: string,
  checkpoint: { agentId: string; sessionId: string; isLatest: boolean } | null,
): void {
  if (!checkpoint) throw notFound('checkpoint', id);
  if (checkpoint.isLatest) {
    throw new MnemoError(
      'conflict',
      `checkpoint ${id} is the latest of agent ${checkpoint.agentId} session ${checkpoint.sessionId}; it can be deleted once a newer checkpoint exists`,
    );
  }
}

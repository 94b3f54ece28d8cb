import { describe, expect, it } from 'vitest';
import { assertCheckpointDeletable, nextRevision } from '../../../src/domain/checkpoint-rules.js';
import { codeOf } from '../../helpers/core.js';

const who = { agentId: 'agent', sessionId: 's1' };
const head = { checkpointId: 'ckpt_2', revision: 2 };

describe('checkpoint rules', () => {
  it('the next revision follows the latest one, or is 1 for a new (agent, session)', () => {
    expect(nextRevision(who, null, undefined)).toBe(1);
    expect(nextRevision(who, head, undefined)).toBe(3);
  });

  it('an expected latest id must name the latest, and null must find none', () => {
    expect(nextRevision(who, head, 'ckpt_2')).toBe(3);
    expect(nextRevision(who, null, null)).toBe(1);
    expect(() => nextRevision(who, head, 'ckpt_1')).toThrow(
      'the latest checkpoint of agent agent session s1 is ckpt_2, not ckpt_1 as expected_latest_checkpoint_id says; restore the latest and retry',
    );
    expect(() => nextRevision(who, null, 'ckpt_1')).toThrow('is none, not ckpt_1');
    expect(() => nextRevision(who, head, null)).toThrow(expect.objectContaining({ code: 'conflict', details: { field: 'expected_latest_checkpoint_id' } }) as Error);
  });

  it('only a checkpoint that is not the latest can be deleted', () => {
    expect(codeOf(() => assertCheckpointDeletable('ckpt_1', null))).toBe('not_found');
    expect(codeOf(() => assertCheckpointDeletable('ckpt_2', { ...who, isLatest: true }))).toBe('conflict');
    expect(() => assertCheckpointDeletable('ckpt_1', { ...who, isLatest: false })).not.toThrow();
  });
});

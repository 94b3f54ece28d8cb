import { describe, expect, it } from 'vitest';
import { planRedaction } from '../../../src/domain/version-rules.js';
import { codeOf } from '../../helpers/core.js';

describe('redaction rules', () => {
  it('an unknown version is not_found, a redacted one is left as it is, an old one is redacted', () => {
    expect(codeOf(() => planRedaction('memver_1', null, false))).toBe('not_found');
    expect(planRedaction('memver_1', { memoryId: 'mem_1', redactedAt: '2026-03-01T00:00:00.000Z' }, false)).toBe('already');
    expect(planRedaction('memver_1', { memoryId: 'mem_1', redactedAt: null }, false)).toBe('redact');
  });

  it('the head version of a live memory is a conflict that says how to get rid of the text', () => {
    expect(() => planRedaction('memver_1', { memoryId: 'mem_1', redactedAt: null }, true)).toThrow(
      'memory version memver_1 is the current version of live memory mem_1; update or delete the memory first',
    );
    expect(codeOf(() => planRedaction('memver_1', { memoryId: 'mem_1', redactedAt: null }, true))).toBe('conflict');
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SEALED_OVERHEAD, seal, unseal } from '../../../src/domain/sealed.js';

const key = randomBytes(32);

describe('sealed values', () => {
  it('open under the key they were sealed with, and show nothing of the text', () => {
    const sealed = seal(key, 'page 42 of store s1');
    expect(unseal(key, sealed)).toBe('page 42 of store s1');
    expect(sealed.toString('latin1')).not.toContain('page 42');
    expect(sealed.length).toBe(SEALED_OVERHEAD + Buffer.byteLength('page 42 of store s1'));
  });

  it('seal the same text differently each time', () => {
    expect(seal(key, 'same').equals(seal(key, 'same'))).toBe(false);
  });

  it('do not open under another key, changed, or cut short', () => {
    const sealed = seal(key, 'secret');
    expect(unseal(randomBytes(32), sealed)).toBeNull();
    for (const at of [0, 12, sealed.length - 1]) {
      const changed = Buffer.from(sealed);
      changed[at] = changed[at]! ^ 1;
      expect(unseal(key, changed)).toBeNull();
    }
    expect(unseal(key, sealed.subarray(0, sealed.length - 1))).toBeNull();
    expect(unseal(key, sealed.subarray(0, SEALED_OVERHEAD - 1))).toBeNull();
  });
});

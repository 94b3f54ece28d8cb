import { describe, expect, it } from 'vitest';
import { applyStorePatch } from '../../../src/domain/store-rules.js';
import type { Store } from '../../../src/domain/types.js';
import { codeOf } from '../../helpers/core.js';

const T = '2026-03-01T00:00:00.000Z';
const NOW = '2026-03-02T00:00:00.000Z';
const store = (s: Partial<Store> = {}): Store => ({
  id: 'memstore_1', workspaceId: 'ws_1', name: 'notes', description: '', metadata: { a: '1' }, createdAt: T, updatedAt: T, archivedAt: null, ...s,
});

describe('store rules', () => {
  it('a patch replaces the name and description and merges metadata key by key', () => {
    const { store: next, changed } = applyStorePatch(store(), { description: 'd', metadata: { a: null, b: '2' } }, NOW);
    expect(changed).toBe(true);
    expect(next).toEqual(store({ description: 'd', metadata: { b: '2' }, updatedAt: NOW }));
  });

  it('a patch that sets what is there changes nothing, and updated_at stays', () => {
    expect(applyStorePatch(store(), { name: 'notes', metadata: { a: '1' } }, NOW)).toEqual({ store: store(), changed: false });
  });

  it('an archived store is refused, and metadata past the pair limit too', () => {
    expect(codeOf(() => applyStorePatch(store({ archivedAt: T }), { name: 'x' }, NOW))).toBe('archived');
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v']));
    expect(codeOf(() => applyStorePatch(store(), { metadata: many }, NOW))).toBe('invalid_request');
  });
});

import { describe, expect, it } from 'vitest';
import { attrsAfterSet, attrsAfterVersion, attrsOfNewMemory } from '../../../src/domain/memory-attrs.js';
import type { Memory } from '../../../src/domain/types.js';

const UPDATED = '2026-03-01T00:00:00.000Z';
const memory = (m: Partial<Memory> = {}): Memory => ({
  id: 'mem_1', storeId: 'memstore_1', path: '/a', content: 'x', contentSha256: '0'.repeat(64), contentSizeBytes: 1, versionId: 'memver_1',
  mode: 0o644, createdAt: UPDATED, updatedAt: UPDATED, expiresAt: null, atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null, ...m,
});

describe('kept attributes', () => {
  it('a new memory keeps what its first save carried and derives the rest', () => {
    expect(attrsOfNewMemory()).toEqual({ mode: 0o644, atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null });
    expect(attrsOfNewMemory({ mtimeMs: 5, uid: 1 }, 0o600)).toEqual({ mode: 0o600, atimeMs: null, mtimeMs: 5, ctimeMs: null, uid: 1, gid: null });
    expect(attrsOfNewMemory({ mode: 0o640 }, 0o600).mode).toBe(0o640);
  });

  it('new content lets mtime and ctime follow the save again and freezes a derived atime at the old mtime', () => {
    expect(attrsAfterVersion(memory({ uid: 3 }), true)).toEqual({ mode: 0o644, atimeMs: Date.parse(UPDATED), mtimeMs: null, ctimeMs: null, uid: 3, gid: null });
    expect(attrsAfterVersion(memory({ atimeMs: 10, mtimeMs: 20 }), true)).toMatchObject({ atimeMs: 10, mtimeMs: null });
  });

  it('a rename keeps the mtime, frozen at the old updated_at when it was derived', () => {
    expect(attrsAfterVersion(memory(), false)).toMatchObject({ mtimeMs: Date.parse(UPDATED), ctimeMs: null });
    expect(attrsAfterVersion(memory({ mtimeMs: 20 }), false).mtimeMs).toBe(20);
  });

  it('a save that carries an mtime (cp -p) keeps it across the new version', () => {
    expect(attrsAfterVersion(memory(), true, { mtimeMs: 1234.5, mode: 0o600 })).toMatchObject({ mtimeMs: 1234.5, mode: 0o600 });
  });

  it('setting attributes moves the ctime to the time of the change, and setting what is there does nothing unless always', () => {
    const now = '2026-03-02T00:00:00.000Z';
    expect(attrsAfterSet(memory(), { uid: 7 }, now, false)).toEqual({ mode: 0o644, atimeMs: null, mtimeMs: null, ctimeMs: Date.parse(now), uid: 7, gid: null });
    expect(attrsAfterSet(memory({ uid: 7 }), { uid: 7 }, now, false)).toBeNull();
    expect(attrsAfterSet(memory({ uid: 7 }), { uid: 7 }, now, true)?.ctimeMs).toBe(Date.parse(now));
  });

  it('setting only the mtime leaves a derived atime where it was (touch -m)', () => {
    expect(attrsAfterSet(memory(), { mtimeMs: 5000 }, UPDATED, true)).toMatchObject({ atimeMs: Date.parse(UPDATED), mtimeMs: 5000 });
    expect(attrsAfterSet(memory({ atimeMs: 1 }), { mtimeMs: 5000 }, UPDATED, true)).toMatchObject({ atimeMs: 1, mtimeMs: 5000 });
  });
});

import { describe, expect, it } from 'vitest';
import { assertNoOverlap, assertStoreWritable, movedPath, overlapProbe } from '../../../src/domain/memory-rules.js';
import { codeOf } from '../../helpers/core.js';

describe('memory rules', () => {
  it('a write to a missing store is not_found and to an archived one refused; a live store takes it', () => {
    expect(codeOf(() => assertStoreWritable('memstore_x', null))).toBe('not_found');
    expect(codeOf(() => assertStoreWritable('memstore_x', { archivedAt: '2026-03-01T00:00:00.000Z' }))).toBe('archived');
    expect(() => assertStoreWritable('memstore_x', { archivedAt: null })).not.toThrow();
  });

  it('the overlap probe asks for the path, each of its ancestors, and anything below it', () => {
    expect(overlapProbe('/a/b/c.md')).toEqual({ atOrAbove: ['/a/b/c.md', '/a', '/a/b'], below: '/a/b/c.md/' });
    expect(overlapProbe('/top')).toEqual({ atOrAbove: ['/top'], below: '/top/' });
  });

  it('a memory found by the probe is a path conflict that says how it overlaps and names it', () => {
    const conflict = (path: string, found: { id: string; path: string }) => {
      try {
        assertNoOverlap(path, found);
      } catch (e) {
        return e;
      }
      return null;
    };
    expect(conflict('/a', { id: 'mem_1', path: '/a' })).toMatchObject({ code: 'path_conflict', message: expect.stringContaining('is already used by') });
    expect(conflict('/a', { id: 'mem_1', path: '/a/b' })).toMatchObject({ message: expect.stringContaining('is an ancestor of the path of') });
    expect(conflict('/a/b', { id: 'mem_1', path: '/a' })).toMatchObject({
      message: expect.stringContaining('is below the path of'), details: { conflicting_path: '/a', conflicting_memory_id: 'mem_1' },
    });
    expect(() => assertNoOverlap('/a', null)).not.toThrow();
  });

  it('a directory move puts each path at the same place below the new directory, within the path limits', () => {
    expect(movedPath('/d', '/n/m', '/d/e/f.md')).toBe('/n/m/e/f.md');
    const deep = '/' + Array.from({ length: 19 }, (_, i) => `s${i}`).join('/');
    expect(movedPath('/d', deep, '/d/f.md')).toBe(deep + '/f.md');
    expect(codeOf(() => movedPath('/d', deep, '/d/e/f.md'))).toBe('path_too_long');
  });
});

/**
 * Pins the input rules test/src/validate.test.ts leaves out: headers, key and workspace names,
 * search queries, expiry, checkpoint references and restores, a mount's kept attributes, the one
 * refusal they all throw, and that a parsed memory body is checked once.
 */
import { describe, expect, it } from 'vitest';
import {
  assertAttrs,
  assertMemoryInput,
  fail,
  parseCheckpointCreate,
  parseExpiry,
  parseIdempotencyKey,
  parseKeyCreate,
  parseMemoryCreate,
  parseMemoryUpdate,
  parseRestore,
  parseSearchQuery,
  parseSessionCreate,
  parseWorkspaceCreate,
  resolveExpiry,
} from '../../src/validate/index.js';
import { codeOf, errorOf, openCore, seedStore } from '../helpers/core.js';

const SHA = 'a'.repeat(64);
const bundle = (extra: Record<string, unknown> = {}) => ({ agent_id: 'agent', session_id: 's1', goal: 'ship it', ...extra });

describe('the one refusal', () => {
  it('names its field in the message and in the details', async () => {
    const err = await errorOf(() => fail('limit', 'must be from 1 to 100'));
    expect(err).toMatchObject({ code: 'invalid_request', message: 'limit: must be from 1 to 100', details: { field: 'limit' } });
  });

  it('stands alone when no field is to blame, and can place its field itself', async () => {
    expect(await errorOf(() => fail(undefined, 'request body must be a JSON object'))).toMatchObject({ message: 'request body must be a JSON object', details: {} });
    expect(await errorOf(() => fail('x', 'x must end with "/"', { prefix: false }))).toMatchObject({ message: 'x must end with "/"', details: { field: 'x' } });
  });
});

describe('the Idempotency-Key header', () => {
  it.each(['k', 'a'.repeat(256), 'ключ-1', 'with spaces and / : ='])('%j is accepted unchanged', (key) => {
    expect(parseIdempotencyKey(key)).toBe(key);
  });

  it('an empty key, a key over 256 bytes and a key with a control character are refused, naming the header', async () => {
    expect((await errorOf(() => parseIdempotencyKey(''))).message).toBe('Idempotency-Key: must be 1 to 256 bytes (got 0)');
    expect((await errorOf(() => parseIdempotencyKey('é'.repeat(129)))).message).toBe('Idempotency-Key: must be 1 to 256 bytes (got 258)');
    expect(await errorOf(() => parseIdempotencyKey('a\tb'))).toMatchObject({ code: 'invalid_request', message: 'Idempotency-Key: must not contain control characters' });
  });
});

describe('key and workspace names', () => {
  it('a key takes a name like a store name, and its store list loses repeats', async () => {
    expect(parseKeyCreate({ name: 'ci', role: 'read_only', memory_store_ids: ['memstore_a', 'memstore_a'] })).toEqual({ name: 'ci', role: 'read_only', storeIds: ['memstore_a'] });
    expect(parseKeyCreate({ name: 'ci', role: 'admin' }).storeIds).toBeNull();
    expect((await errorOf(() => parseKeyCreate({ name: '', role: 'admin' }))).message).toBe('name: must be 1 to 255 characters (got 0)');
    expect((await errorOf(() => parseKeyCreate({ name: 'a\u0007', role: 'admin' }))).message).toBe('name: must not contain control characters');
  });

  it('a key limited to an empty list of stores, or given an unknown role, is refused', async () => {
    expect((await errorOf(() => parseKeyCreate({ name: 'ci', role: 'read_only', memory_store_ids: [] }))).message).toBe(
      'memory_store_ids: must name at least one store, or be left out for all stores',
    );
    expect(codeOf(() => parseKeyCreate({ name: 'ci', role: 'owner' }))).toBe('invalid_request');
  });

  it('a workspace name follows the same rules', async () => {
    expect(parseWorkspaceCreate({ name: 'team' })).toEqual({ name: 'team' });
    expect((await errorOf(() => parseWorkspaceCreate({ name: 'x'.repeat(256) }))).message).toBe('name: must be 1 to 255 characters (got 256)');
    expect(codeOf(() => parseWorkspaceCreate({ name: 'a\uD800' }))).toBe('invalid_utf8');
  });
});

describe('session bodies', () => {
  const resource = (id: string, extra: Record<string, unknown> = {}) => ({ type: 'memory_store', memory_store_id: id, ...extra });

  it('no resources, more than eight, or one store twice are refused, naming the resource', async () => {
    expect((await errorOf(() => parseSessionCreate({ resources: [] }))).message).toBe('resources: at least one memory_store resource is required');
    const nine = Array.from({ length: 9 }, (_, i) => resource(`memstore_${i}`));
    expect((await errorOf(() => parseSessionCreate({ resources: nine }))).message).toBe('resources: at most 8 memory stores per session (got 9)');
    expect((await errorOf(() => parseSessionCreate({ resources: [resource('memstore_a'), resource('memstore_a')] }))).message).toBe(
      'resources.1.memory_store_id: the same store is attached twice',
    );
  });

  it('an unknown field in a resource is refused with the field placed inside the message', async () => {
    expect(await errorOf(() => parseSessionCreate({ resources: [resource('memstore_a', { path: '/x' })] }))).toMatchObject({
      message: 'unknown field in resources.0: path',
      details: { field: 'resources.0' },
    });
  });
});

describe('search queries', () => {
  it('a query defaults to full-text search of the whole store, 20 hits a page', () => {
    expect(parseSearchQuery({ q: 'word' })).toEqual({ q: 'word', mode: 'fts', pathPrefix: '/', limit: 20, page: null });
    expect(parseSearchQuery({ q: 'a b', mode: 'substring', path_prefix: '/notes/', limit: '5', page: '' })).toMatchObject({ mode: 'substring', pathPrefix: '/notes/', limit: 5, page: null });
  });

  it('a missing or blank query, one over 1,024 characters, and an unknown mode are refused', async () => {
    expect((await errorOf(() => parseSearchQuery({}))).message).toBe('q: is required and must not be blank');
    expect((await errorOf(() => parseSearchQuery({ q: '   ' }))).message).toBe('q: is required and must not be blank');
    expect((await errorOf(() => parseSearchQuery({ q: 'x'.repeat(1025) }))).message).toBe('q: must be at most 1024 characters');
    expect((await errorOf(() => parseSearchQuery({ q: 'x', mode: 'regex' }))).message).toBe('mode: must be "fts" or "substring"');
    expect(codeOf(() => parseSearchQuery({ q: 'a\uDC00' }))).toBe('invalid_utf8');
    expect((await errorOf(() => parseSearchQuery({ q: 'x', path_prefix: '/notes' }))).message).toBe('path_prefix must end with "/"');
  });
});

describe('memory expiry', () => {
  it('ttl_seconds is an integer from 1 second to 10 years', async () => {
    expect(parseExpiry({ ttl_seconds: 1 }, false)).toEqual({ ttlSeconds: 1 });
    expect(parseExpiry({ ttl_seconds: 315_360_000 }, false)).toEqual({ ttlSeconds: 315_360_000 });
    for (const ttl of [0, 1.5, 315_360_001, -5]) {
      expect((await errorOf(() => parseExpiry({ ttl_seconds: ttl }, false))).message).toBe('ttl_seconds: must be an integer from 1 to 315360000');
    }
  });

  it('expires_at is an RFC 3339 timestamp kept in canonical form, and only an update can clear it', () => {
    expect(parseExpiry({ expires_at: '2030-01-01T01:00:00+01:00' }, false)).toEqual({ expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(codeOf(() => parseExpiry({ expires_at: 'tomorrow' }, false))).toBe('invalid_request');
    expect(parseExpiry({ expires_at: null }, true)).toBeNull();
    expect(parseExpiry({ expires_at: null }, false)).toBeUndefined();
    expect(parseExpiry({}, true)).toBeUndefined();
  });

  it('an expiry resolves against the clock, and an expires_at not in the future is refused', async () => {
    const now = '2026-01-01T00:00:00.000Z';
    expect(resolveExpiry({ ttlSeconds: 60 }, now)).toBe('2026-01-01T00:01:00.000Z');
    expect(resolveExpiry(null, now)).toBeNull();
    expect((await errorOf(() => resolveExpiry({ expiresAt: now }, now))).message).toBe(`expires_at: must be in the future (now is ${now})`);
  });
});

describe('checkpoint references and restores', () => {
  it('a reference must name a memory and what it relied on, by well-formed ids', async () => {
    const refused = async (ref: unknown) => (await errorOf(() => parseCheckpointCreate(bundle({ references: [ref] })))).message;
    expect(await refused({ content_sha256: SHA })).toBe('references.0: names no memory: give memory_id or path');
    expect(await refused({ path: '/a.md' })).toBe('references.0: needs the content_sha256 or memory_version_id it relied on');
    expect(await refused({ memory_id: 'not an id!', content_sha256: SHA })).toBe('references.0.memory_id: must be a memory id (mem_…), not not an id!');
    expect(await refused({ path: '/a.md', content_sha256: 'ABC' })).toBe('references.0.content_sha256: must be 64 lowercase hexadecimal characters');
    expect(codeOf(() => parseCheckpointCreate(bundle({ references: [{ path: 'a.md', content_sha256: SHA }] })))).toBe('invalid_path');
  });

  it('checkpoint bodies lead every refusal with its field, unknown fields and non-objects too', async () => {
    expect(await errorOf(() => parseCheckpointCreate(bundle({ mood: 'ok' })))).toMatchObject({ message: 'body: unknown field: mood', details: { field: 'body' } });
    expect((await errorOf(() => parseCheckpointCreate(bundle({ references: [{ path: '/a', content_sha256: SHA, x: 1 }] })))).message).toBe('references.0: unknown field: x');
    expect(await errorOf(() => parseCheckpointCreate(bundle({ references: ['/a.md'] })))).toMatchObject({ message: 'references.0 must be a JSON object', details: { field: 'references.0' } });
    expect(await errorOf(() => parseCheckpointCreate([]))).toMatchObject({ message: 'request body must be a JSON object', details: {} });
  });

  it('a restore budget is an integer from 512 bytes to 1.25 MiB, 32 KiB when absent', async () => {
    expect(parseRestore({})).toEqual({ maxBytes: 32 * 1024 });
    expect(parseRestore({ max_bytes: 512 })).toEqual({ maxBytes: 512 });
    expect((await errorOf(() => parseRestore({ max_bytes: 511 }))).message).toBe('max_bytes: must be an integer from 512 to 1310720 (got 511)');
    expect(codeOf(() => parseRestore({ max_bytes: 1310720 + 1 }))).toBe('invalid_request');
  });
});

describe('the attributes a mount keeps', () => {
  it('times are finite milliseconds, owners fit a uid_t less (uid_t)-1, and a mode keeps its permission bits', async () => {
    expect(assertAttrs({ mode: 0o100644, mtimeMs: 1.5, uid: 0, gid: 4294967294 })).toEqual({ mode: 0o644, mtimeMs: 1.5, uid: 0, gid: 4294967294 });
    expect((await errorOf(() => assertAttrs({ atimeMs: Number.NaN }))).message).toBe('atimeMs must be a finite number of milliseconds');
    expect((await errorOf(() => assertAttrs({ uid: 0xffffffff }))).message).toBe('uid must be an integer from 0 to 4294967294');
    expect(codeOf(() => assertAttrs({ gid: -1 }))).toBe('invalid_request');
  });
});

describe('a memory body is checked once', () => {
  it('a parsed memory body comes out frozen, so no face can change it after the check', () => {
    const create = parseMemoryCreate({ path: '/a.md', content: 'x' });
    const update = parseMemoryUpdate({ path: '/b.md' });
    expect(Object.isFrozen(create) && Object.isFrozen(update)).toBe(true);
    expect(() => {
      (create as { path: string }).path = 'relative';
    }).toThrow(TypeError);
    expect(assertMemoryInput(create)).toBe(create);
  });

  it('the service checks a memory write no parser built, and a copy of a parsed one', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'x' });
    const parsed = parseMemoryCreate({ path: '/b', content: 'y' });
    expect(await codeOf(() => core.service.createMemory(core.caller, store.id, { ...parsed, path: '/b/' }))).toBe('invalid_path');
    expect(await codeOf(() => core.service.createMemory(core.caller, store.id, { ...parsed, content: '\uD800' }))).toBe('invalid_utf8');
    expect(await core.service.createMemory(core.caller, store.id, parsed)).toMatchObject({ path: '/b', content: 'y' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, m.id, { ...parseMemoryUpdate({ content: 'z' }), path: 'a' }))).toBe('invalid_path');
  });
});

/**
 * Pins every input rule of DESIGN §1 as tables: memory paths, path prefixes, content, raw bytes,
 * store fields, list parameters, timestamps and request bodies. Failures are asserted by code.
 */
import { describe, expect, it } from 'vitest';
import { assertContent, assertEntryName, decodeUtf8, parseCheckpointCreate, parseKeyCreate, parseLimit, parseMemoryCreate, parseMemoryListQuery, parseMemoryUpdate, parseSessionCreate, parseSha256, parseStoreCreate, parseStoreListQuery, parseStoreUpdate, parseTimestamp, parseVersionListQuery, parseView } from '../../src/validate/index.js';
import { sha256Hex } from '../../src/domain/content.js';
import type { ErrorCode } from '../../src/domain/errors.js';
import { codeOf, errorOf } from '../helpers/core.js';
import { assertMemoryPath, assertPathPrefix } from '../../src/validate/index.js';


const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const segs = (n: number) => '/' + Array.from({ length: n }, (_, i) => `s${i}`).join('/');
const SHA = sha256Hex('hello');

describe('memory paths', () => {
  const valid: [string, string][] = [
    ['a single segment', '/a.md'],
    ['nested segments', '/notes/2026/jan.md'],
    ['non-ASCII letters in NFC', '/ünïcödé/日本語.md'],
    ['an emoji', '/emoji-😀.md'],
    ['spaces and punctuation', '/with space/a-b_c (1).md'],
    ['dot files and triple dots', '/a/.hidden/...'],
    ['upper case', '/Notes/README.MD'],
    ['a compatibility character that NFC keeps (ﬁ)', '/ﬁle'],
    ['exactly 20 segments', segs(20)],
    ['exactly 1,024 ASCII bytes', '/' + 'a'.repeat(1023)],
    ['exactly 1,024 bytes of 3-byte characters', '/' + '€'.repeat(341)],
    ['exactly 1,024 bytes with 4-byte characters', '/' + '😀'.repeat(255) + 'abc'],
  ];
  it.each(valid)('%s is accepted unchanged', (_name, path) => {
    expect(assertMemoryPath(path)).toBe(path);
  });

  it('the byte-limit fixtures sit exactly at their edges', () => {
    expect(bytes('/' + '€'.repeat(341))).toBe(1024);
    expect(bytes('/' + '😀'.repeat(255) + 'abc')).toBe(1024);
    expect(bytes('/' + 'é'.repeat(512))).toBe(1025);
    expect(bytes('/' + '😀'.repeat(256))).toBe(1025);
  });

  const invalid: [string, unknown, ErrorCode][] = [
    ['the empty string', '', 'invalid_path'],
    ['a path without the leading slash', 'a.md', 'invalid_path'],
    ['a relative dot path', './a.md', 'invalid_path'],
    ['the root alone', '/', 'invalid_path'],
    ['a leading empty segment', '//a', 'invalid_path'],
    ['an empty middle segment', '/a//b', 'invalid_path'],
    ['a trailing slash', '/a/', 'invalid_path'],
    ['a "." segment', '/a/./b', 'invalid_path'],
    ['a lone "."', '/.', 'invalid_path'],
    ['a ".." segment', '/a/../b', 'invalid_path'],
    ['a lone ".."', '/..', 'invalid_path'],
    ['21 segments', segs(21), 'path_too_long'],
    ['1,025 ASCII bytes', '/' + 'a'.repeat(1024), 'path_too_long'],
    ['1,025 bytes of 2-byte characters', '/' + 'é'.repeat(512), 'path_too_long'],
    ['1,025 bytes of 4-byte characters', '/' + '😀'.repeat(256), 'path_too_long'],
    ['NUL', '/a\u0000b', 'invalid_path'],
    ['a newline', '/a\nb', 'invalid_path'],
    ['a tab', '/a\tb', 'invalid_path'],
    ['DEL', '/a\u007fb', 'invalid_path'],
    ['a C1 control (U+0085)', '/a\u0085b', 'invalid_path'],
    ['a zero-width space (U+200B)', '/a\u200Bb', 'invalid_path'],
    ['a byte order mark (U+FEFF)', '/\uFEFFa', 'invalid_path'],
    ['a left-to-right mark (U+200E)', '/a\u200Eb', 'invalid_path'],
    ['a soft hyphen (U+00AD)', '/a\u00ADb', 'invalid_path'],
    ['a line separator (U+2028)', '/a\u2028b', 'invalid_path'],
    ['a paragraph separator (U+2029)', '/a\u2029b', 'invalid_path'],
    ['a lone high surrogate', '/a\uD800b', 'invalid_path'],
    ['a lone low surrogate', '/a\uDC00', 'invalid_path'],
    ['a decomposed é (e + U+0301, not NFC)', '/caf' + 'e\u0301', 'invalid_path'],
    ['a decomposed Å (A + U+030A, not NFC)', '/A\u030A.md', 'invalid_path'],
    ['a number', 42, 'invalid_path'],
    ['null', null, 'invalid_path'],
  ];
  it.each(invalid)('%s is refused', (_name, path, code) => {
    expect(codeOf(() => assertMemoryPath(path))).toBe(code);
  });

  it('paths are case-sensitive: no case folding happens', () => {
    expect(assertMemoryPath('/A.md')).toBe('/A.md');
    expect(assertMemoryPath('/a.md')).toBe('/a.md');
  });

  it('the refusal names the field it came from', () => {
    try {
      assertMemoryPath('nope', 'path');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid_path', details: { field: 'path' } });
    }
  });

  it('parseMemoryCreate applies the same rules to the path', () => {
    expect(codeOf(() => parseMemoryCreate({ path: '/a/', content: 'x' }))).toBe('invalid_path');
    expect(codeOf(() => parseMemoryCreate({ path: '/' + 'a'.repeat(1024), content: 'x' }))).toBe('path_too_long');
    expect(parseMemoryCreate({ path: segs(20), content: 'x' })).toEqual({ path: segs(20), content: 'x' });
  });

  it('parseMemoryUpdate applies the same rules to a new path', () => {
    expect(codeOf(() => parseMemoryUpdate({ path: 'e\u0301' }))).toBe('invalid_path');
    expect(codeOf(() => parseMemoryUpdate({ path: segs(21) }))).toBe('path_too_long');
  });
});

describe('path prefixes', () => {
  it.each(['/', '/notes/', '/notes/2026/', segs(20) + '/', '/日本/'])('%s is accepted', (prefix) => {
    expect(assertPathPrefix(prefix)).toBe(prefix);
  });

  const invalid: [string, unknown, ErrorCode][] = [
    ['a prefix without the trailing slash', '/notes', 'invalid_request'],
    ['the empty string', '', 'invalid_request'],
    ['a number', 7, 'invalid_request'],
    ['a prefix without the leading slash', 'notes/', 'invalid_path'],
    ['a prefix with an empty segment', '/a//', 'invalid_path'],
    ['a prefix with a ".." segment', '/../', 'invalid_path'],
    ['a prefix of 21 segments', segs(21) + '/', 'path_too_long'],
    ['a prefix with a control character', '/a\u0001/', 'invalid_path'],
  ];
  it.each(invalid)('%s is refused', (_name, prefix, code) => {
    expect(codeOf(() => assertPathPrefix(prefix))).toBe(code);
  });

  it('the memory list query defaults the prefix to "/" and checks a given one', () => {
    expect(parseMemoryListQuery({}).pathPrefix).toBe('/');
    expect(parseMemoryListQuery({ path_prefix: '/notes/' }).pathPrefix).toBe('/notes/');
    expect(codeOf(() => parseMemoryListQuery({ path_prefix: '/notes' }))).toBe('invalid_request');
  });
});

describe('content', () => {
  const valid: [string, string, number][] = [
    ['empty content', '', 0],
    ['exactly 102,400 ASCII bytes', 'x'.repeat(102_400), 102_400],
    ['exactly 102,400 bytes of 3-byte characters plus one ASCII byte', '€'.repeat(34_133) + 'a', 102_400],
    ['exactly 102,400 bytes of 4-byte characters', '😀'.repeat(25_600), 102_400],
    ['control characters, which are valid UTF-8 text', 'a\u0000\t\r\n\u007f', 6],
    ['a leading byte order mark, kept as is', '\uFEFFhello', 8],
  ];
  it.each(valid)('%s is accepted unchanged', (_name, content, size) => {
    expect(bytes(content)).toBe(size);
    expect(assertContent(content)).toBe(content);
  });

  const invalid: [string, string, ErrorCode][] = [
    ['102,401 ASCII bytes', 'x'.repeat(102_401), 'content_too_large'],
    ['102,402 bytes of 3-byte characters', '€'.repeat(34_134), 'content_too_large'],
    ['102,401 bytes where the last character is 4 bytes', 'x'.repeat(102_397) + '😀', 'content_too_large'],
    ['a lone high surrogate', 'abc\uD800', 'invalid_utf8'],
    ['a lone low surrogate', '\uDC00abc', 'invalid_utf8'],
    ['swapped surrogates', '\uDE00\uD83D', 'invalid_utf8'],
  ];
  it.each(invalid)('%s is refused', (_name, content, code) => {
    expect(codeOf(() => assertContent(content))).toBe(code);
  });

  it('parseMemoryCreate and parseMemoryUpdate apply the same content rules', () => {
    expect(codeOf(() => parseMemoryCreate({ path: '/a', content: 'x'.repeat(102_401) }))).toBe('content_too_large');
    expect(codeOf(() => parseMemoryUpdate({ content: '\uD800' }))).toBe('invalid_utf8');
    expect(parseMemoryCreate({ path: '/a', content: null })).toEqual({ path: '/a', content: '' });
  });
});

describe('raw bytes from a mount (decodeUtf8)', () => {
  const valid: [string, number[], string][] = [
    ['no bytes', [], ''],
    ['ASCII', [0x68, 0x69], 'hi'],
    ['a 2-byte character', [0xc3, 0xa9], 'é'],
    ['a 4-byte character', [0xf0, 0x9f, 0x98, 0x80], '😀'],
    ['a leading byte order mark, which is kept', [0xef, 0xbb, 0xbf, 0x61], '\uFEFFa'],
  ];
  it.each(valid)('%s decodes', (_name, input, text) => {
    expect(decodeUtf8(Uint8Array.from(input))).toBe(text);
  });

  const invalid: [string, number[]][] = [
    ['a lone 0xFF', [0x61, 0xff]],
    ['a lone continuation byte', [0x80]],
    ['a truncated 2-byte sequence', [0x61, 0xc3]],
    ['a truncated 3-byte sequence', [0xe2, 0x82]],
    ['an overlong "/"', [0xc0, 0xaf]],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['Latin-1 text', [0x63, 0x61, 0x66, 0xe9]],
  ];
  it.each(invalid)('%s is refused with invalid_utf8', (_name, input) => {
    expect(codeOf(() => decodeUtf8(Uint8Array.from(input)))).toBe('invalid_utf8');
  });

  it('exactly 102,400 bytes decode and 102,401 are refused as too large', () => {
    expect(decodeUtf8(new Uint8Array(102_400).fill(0x61))).toHaveLength(102_400);
    expect(codeOf(() => decodeUtf8(new Uint8Array(102_401).fill(0x61)))).toBe('content_too_large');
  });
});

describe('store fields', () => {
  const names: [string, string, 'accepted' | 'refused'][] = [
    ['one character', 'a', 'accepted'],
    ['255 characters', 'n'.repeat(255), 'accepted'],
    ['255 emoji (code points, not UTF-16 units)', '😀'.repeat(255), 'accepted'],
    ['spaces and punctuation', 'Team notes: Q1/Q2', 'accepted'],
    ['256 characters', 'n'.repeat(256), 'refused'],
    ['256 emoji', '😀'.repeat(256), 'refused'],
    ['the empty string', '', 'refused'],
    ['a newline', 'a\nb', 'refused'],
    ['NUL', 'a\u0000', 'refused'],
    ['DEL', 'a\u007f', 'refused'],
    ['a lone surrogate', 'a\uD800', 'refused'],
  ];
  it.each(names)('a name of %s is %s', (_name, name, ok) => {
    const parse = () => parseStoreCreate({ name });
    if (ok === 'accepted') expect(parse().name).toBe(name);
    else expect(['invalid_request', 'invalid_utf8']).toContain(codeOf(parse));
  });

  it('a name with a lone surrogate is refused as invalid_utf8', () => {
    expect(codeOf(() => parseStoreCreate({ name: 'a\uD800' }))).toBe('invalid_utf8');
  });

  it.each([
    ['1,024 characters', 'd'.repeat(1024), 'accepted'],
    ['1,024 emoji', '😀'.repeat(1024), 'accepted'],
    ['1,025 characters', 'd'.repeat(1025), 'refused'],
  ] as const)('a description of %s is %s', (_name, description, ok) => {
    const parse = () => parseStoreCreate({ name: 'a', description });
    if (ok === 'accepted') expect(parse().description).toBe(description);
    else expect(codeOf(parse)).toBe('invalid_request');
  });

  it('a missing or null description becomes the empty string', () => {
    expect(parseStoreCreate({ name: 'a' }).description).toBe('');
    expect(parseStoreCreate({ name: 'a', description: null }).description).toBe('');
  });

  const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
  const metadata: [string, Record<string, unknown>, 'accepted' | 'refused'][] = [
    ['no pairs', {}, 'accepted'],
    ['16 pairs', pairs(16), 'accepted'],
    ['17 pairs', pairs(17), 'refused'],
    ['a 64-character key', { ['k'.repeat(64)]: 'v' }, 'accepted'],
    ['a 65-character key', { ['k'.repeat(65)]: 'v' }, 'refused'],
    ['an empty key', { '': 'v' }, 'refused'],
    ['a 512-character value', { k: 'v'.repeat(512) }, 'accepted'],
    ['a 513-character value', { k: 'v'.repeat(513) }, 'refused'],
    ['an empty value', { k: '' }, 'accepted'],
    ['a number value', { k: 1 }, 'refused'],
    ['a null value on create', { k: null }, 'refused'],
  ];
  it.each(metadata)('metadata with %s is %s', (_name, md, ok) => {
    const parse = () => parseStoreCreate({ name: 'a', metadata: md });
    if (ok === 'accepted') expect(parse().metadata).toEqual(md);
    else expect(codeOf(parse)).toBe('invalid_request');
  });

  it('a store update keeps null metadata values (they remove keys) and checks the rest', () => {
    expect(parseStoreUpdate({ metadata: { gone: null, kept: 'v' } })).toEqual({ metadata: { gone: null, kept: 'v' } });
    expect(codeOf(() => parseStoreUpdate({ metadata: { k: 'v'.repeat(513) } }))).toBe('invalid_request');
    expect(codeOf(() => parseStoreUpdate({ metadata: { ['k'.repeat(65)]: null } }))).toBe('invalid_request');
    expect(codeOf(() => parseStoreUpdate({ name: '' }))).toBe('invalid_request');
    expect(parseStoreUpdate({ name: null, description: null })).toEqual({});
  });
});

describe('list parameters', () => {
  it.each([
    ['1', 'basic', 1],
    ['100', 'basic', 100],
    ['20', 'full', 20],
    ['21', 'full', 20],
    ['100', 'full', 20],
    ['1', 'full', 1],
    [undefined, 'basic', 20],
    [undefined, 'full', 20],
  ] as const)('limit %s with view=%s reads as %s', (raw, view, n) => {
    expect(parseLimit(raw, view)).toBe(n);
  });

  it.each([
    ['0', 'basic'],
    ['101', 'basic'],
    ['101', 'full'],
    ['0', 'full'],
    ['abc', 'basic'],
    ['1.5', 'basic'],
    ['-1', 'basic'],
    ['', 'basic'],
    [' 5', 'basic'],
    ['1e2', 'basic'],
    ['0x10', 'basic'],
    ['9999999', 'basic'],
  ] as const)('limit %j with view=%s is refused', (raw, view) => {
    expect(codeOf(() => parseLimit(raw, view))).toBe('invalid_request');
  });

  it('list queries cap the limit at 20 with view=full', () => {
    expect(parseMemoryListQuery({ view: 'full', limit: '20' }).limit).toBe(20);
    expect(parseMemoryListQuery({ view: 'full', limit: '21' }).limit).toBe(20);
    expect(parseVersionListQuery({ view: 'full', limit: '50' }).limit).toBe(20);
    expect(codeOf(() => parseVersionListQuery({ view: 'full', limit: '101' }))).toBe('invalid_request');
    expect(parseVersionListQuery({ limit: '100' }).limit).toBe(100);
    expect(codeOf(() => parseStoreListQuery({ limit: '101' }))).toBe('invalid_request');
  });

  it.each([
    [undefined, 0],
    ['0', 0],
    ['1', 1],
  ] as const)('depth %s is accepted as %s', (raw, depth) => {
    expect(parseMemoryListQuery(raw === undefined ? {} : { depth: raw }).depth).toBe(depth);
  });

  it.each(['2', '-1', '', 'true', '01', '1.0'])('depth %j is refused', (raw) => {
    expect(codeOf(() => parseMemoryListQuery({ depth: raw }))).toBe('invalid_request');
  });

  it.each([
    ['basic', 'basic'],
    ['full', 'full'],
    [undefined, 'basic'],
  ] as const)('view %s reads as %s', (raw, view) => {
    expect(parseView(raw, 'basic')).toBe(view);
  });

  it.each(['FULL', 'Basic', '', 'all'])('view %j is refused', (raw) => {
    expect(codeOf(() => parseView(raw, 'basic'))).toBe('invalid_request');
  });

  it.each(['created', 'modified', 'deleted'])('operation %s is accepted', (op) => {
    expect(parseVersionListQuery({ operation: op }).operation).toBe(op);
  });

  it.each(['updated', 'CREATED', ''])('operation %j is refused', (op) => {
    expect(codeOf(() => parseVersionListQuery({ operation: op }))).toBe('invalid_request');
  });

  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
  ] as const)('include_archived %s reads as %s', (raw, value) => {
    expect(parseStoreListQuery(raw === undefined ? {} : { include_archived: raw }).includeArchived).toBe(value);
  });

  it.each(['yes', '1', 'TRUE', ''])('include_archived %j is refused', (raw) => {
    expect(codeOf(() => parseStoreListQuery({ include_archived: raw }))).toBe('invalid_request');
  });

  it('an empty page parameter means the first page', () => {
    expect(parseMemoryListQuery({ page: '' }).page).toBeNull();
    expect(parseVersionListQuery({ page: 'page_abc' }).page).toBe('page_abc');
  });
});

describe('timestamps', () => {
  it.each([
    ['2026-01-31T12:00:00Z', '2026-01-31T12:00:00.000Z'],
    ['2026-01-31T12:00:00.5Z', '2026-01-31T12:00:00.500Z'],
    ['2026-01-31T12:00:00.123456Z', '2026-01-31T12:00:00.123Z'],
    ['2026-01-31T13:30:00+01:30', '2026-01-31T12:00:00.000Z'],
    ['2026-01-31T07:00:00-05:00', '2026-01-31T12:00:00.000Z'],
    ['2026-01-31t12:00:00z', '2026-01-31T12:00:00.000Z'],
    ['2026-01-31 12:00:00Z', '2026-01-31T12:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59Z', '2026-12-31T23:59:59.000Z'],
  ])('%s reads as %s', (raw, canonical) => {
    expect(parseTimestamp(raw, 'created_at[gte]')).toBe(canonical);
  });

  it.each([
    '2026-01-31',
    '12:00:00Z',
    '2026-01-31T12:00:00',
    '2026-01-31T12:00Z',
    'yesterday',
    '1769860800',
    '',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-01-31T24:00:00Z',
    '2026-01-31T12:60:00Z',
    '2026-01-31T12:00:61Z',
    '2026-01-31T12:00:00+25:00',
    ' 2026-01-31T12:00:00Z',
  ])('%j is refused', (raw) => {
    expect(codeOf(() => parseTimestamp(raw, 'created_at[lte]'))).toBe('invalid_request');
  });

  it('list queries read created_at[gte] and created_at[lte]', () => {
    const q = parseVersionListQuery({ 'created_at[gte]': '2026-01-01T00:00:00Z', 'created_at[lte]': '2026-02-01T00:00:00+00:00' });
    expect([q.createdGte, q.createdLte]).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(codeOf(() => parseStoreListQuery({ 'created_at[gte]': 'soon' }))).toBe('invalid_request');
  });
});

describe('request bodies', () => {
  const unknownFields: [string, () => unknown][] = [
    ['a store create', () => parseStoreCreate({ name: 'a', colour: 'red' })],
    ['a store update', () => parseStoreUpdate({ archived: true })],
    ['a memory create', () => parseMemoryCreate({ path: '/a', content: 'x', mode: 420 })],
    ['a memory update', () => parseMemoryUpdate({ content: 'x', force: true })],
    ['a precondition', () => parseMemoryUpdate({ content: 'x', precondition: { type: 'content_sha256', content_sha256: SHA, strict: true } })],
    ['a session create', () => parseSessionCreate({ resources: [], ttl: 5 })],
    ['a session resource', () => parseSessionCreate({ resources: [{ type: 'memory_store', memory_store_id: 'memstore_x', path: '/x' }] })],
  ];
  it.each(unknownFields)('an unknown field in %s is refused', (_name, parse) => {
    expect(codeOf(parse)).toBe('invalid_request');
  });

  it('the refusal names the unknown field', () => {
    expect(() => parseStoreCreate({ name: 'a', colour: 'red' })).toThrow(/colour/);
  });

  const wrongTypes: [string, () => unknown][] = [
    ['a null body', () => parseStoreCreate(null)],
    ['an array body', () => parseStoreCreate([{ name: 'a' }])],
    ['a string body', () => parseMemoryCreate('{"path":"/a"}')],
    ['a number body', () => parseMemoryUpdate(42)],
    ['a missing store name', () => parseStoreCreate({})],
    ['a numeric store name', () => parseStoreCreate({ name: 42 })],
    ['a numeric description', () => parseStoreCreate({ name: 'a', description: 5 })],
    ['metadata as a string', () => parseStoreCreate({ name: 'a', metadata: 'k=v' })],
    ['metadata as an array', () => parseStoreCreate({ name: 'a', metadata: ['k'] })],
    ['a numeric path', () => parseMemoryCreate({ path: 42, content: 'x' })],
    ['a missing path', () => parseMemoryCreate({ content: 'x' })],
    ['a missing content', () => parseMemoryCreate({ path: '/a' })],
    ['numeric content', () => parseMemoryCreate({ path: '/a', content: 1 })],
    ['content as an object', () => parseMemoryUpdate({ content: { text: 'x' } })],
    ['a boolean path on update', () => parseMemoryUpdate({ path: true })],
    ['an update with neither content nor path', () => parseMemoryUpdate({})],
    ['an update with null content and path', () => parseMemoryUpdate({ content: null, path: null })],
    ['a precondition as a string', () => parseMemoryUpdate({ content: 'x', precondition: SHA })],
    ['a precondition of another type', () => parseMemoryUpdate({ content: 'x', precondition: { type: 'etag', content_sha256: SHA } })],
    ['a precondition without its sha', () => parseMemoryUpdate({ content: 'x', precondition: { type: 'content_sha256' } })],
    ['resources as an object', () => parseSessionCreate({ resources: {} })],
    ['a resource of another type', () => parseSessionCreate({ resources: [{ type: 'file', memory_store_id: 'memstore_x' }] })],
    ['an unknown access', () => parseSessionCreate({ resources: [{ type: 'memory_store', memory_store_id: 'memstore_x', access: 'admin' }] })],
  ];
  it.each(wrongTypes)('%s is refused', (_name, parse) => {
    expect(codeOf(parse)).toBe('invalid_request');
  });

  const wrongTypeMessages: [string, () => unknown, string][] = [
    ['a string precondition', () => parseMemoryUpdate({ content: 'x', precondition: SHA }), 'precondition: must be an object (got a string)'],
    ['a boolean content on update', () => parseMemoryUpdate({ content: true }), 'content: must be a string (got a boolean)'],
    ['resources as an object', () => parseSessionCreate({ resources: {} }), 'resources: must be an array (got an object)'],
    ['a numeric resource store id', () => parseSessionCreate({ resources: [{ type: 'memory_store', memory_store_id: 5 }] }), 'resources.0.memory_store_id: must be a string (got 5)'],
    ['a numeric checkpoint goal', () => parseCheckpointCreate({ agent_id: 'a', session_id: 's', goal: 5 }), 'goal: must be a string (got 5)'],
    ['a checkpoint reference with a numeric path', () => parseCheckpointCreate({ agent_id: 'a', session_id: 's', goal: 'g', references: [{ path: 5 }] }), 'references.0.path: must be a string (got 5)'],
    ['constraints as a string', () => parseCheckpointCreate({ agent_id: 'a', session_id: 's', goal: 'g', constraints: 'x' }), 'constraints: must be an array (got a string)'],
    ['a checkpoint without its session', () => parseCheckpointCreate({ agent_id: 'a', goal: 'g' }), 'session_id: is required'],
    ['a retention keeping no version', () => parseStoreCreate({ name: 'n', retention: { keep_last: 0 } }), 'retention.keep_last: must be at least 1 (got 0)'],
    ['a retention of a million years', () => parseStoreCreate({ name: 'n', retention: { max_age_days: 365e6 } }), 'retention.max_age_days: must be at most 36500 (got 365000000)'],
    ['a key for 101 stores', () => parseKeyCreate({ name: 'k', role: 'read_only', memory_store_ids: Array.from({ length: 101 }, (_, i) => `memstore_${i}`) }), 'memory_store_ids: must have at most 100 items'],
  ];
  it.each(wrongTypeMessages)('%s is refused saying what the field must be, or that it is required', async (_name, parse, message) => {
    expect(await errorOf(parse)).toMatchObject({ code: 'invalid_request', message });
  });

  it('a well-formed memory update keeps what was given', () => {
    expect(parseMemoryUpdate({ content: 'x', path: '/b', precondition: { type: 'content_sha256', content_sha256: SHA } })).toEqual({
      content: 'x',
      path: '/b',
      expectedSha256: SHA,
    });
    expect(parseMemoryUpdate({ path: '/b', precondition: null })).toEqual({ path: '/b' });
  });

  it.each([
    ['1 resource', 1, 'accepted'],
    ['8 resources', 8, 'accepted'],
    ['9 resources', 9, 'refused'],
    ['no resources', 0, 'refused'],
  ] as const)('a session with %s is %s', (_name, n, ok) => {
    const resources = Array.from({ length: n }, (_, i) => ({ type: 'memory_store', memory_store_id: `memstore_${i}` }));
    const parse = () => parseSessionCreate({ resources });
    if (ok === 'accepted') expect(parse().resources).toHaveLength(n);
    else expect(codeOf(parse)).toBe('invalid_request');
  });

  it('a session resource defaults to read_write, refuses a repeated store and caps instructions at 4,096 characters', () => {
    const one = (extra: object) => ({ resources: [{ type: 'memory_store', memory_store_id: 'memstore_a', ...extra }] });
    expect(parseSessionCreate(one({})).resources[0]).toEqual({ storeId: 'memstore_a', access: 'read_write', instructions: null, asOf: null });
    expect(parseSessionCreate(one({ instructions: 'i'.repeat(4096) })).resources[0]?.instructions).toHaveLength(4096);
    expect(codeOf(() => parseSessionCreate(one({ instructions: 'i'.repeat(4097) })))).toBe('invalid_request');
    const twice = { resources: [0, 1].map(() => ({ type: 'memory_store', memory_store_id: 'memstore_a' })) };
    expect(codeOf(() => parseSessionCreate(twice))).toBe('invalid_request');
  });

  it('a session resource with as_of is read_only unless asked read_write, which is refused, and as_of must be RFC 3339', () => {
    const one = (extra: object) => ({ resources: [{ type: 'memory_store', memory_store_id: 'memstore_a', ...extra }] });
    expect(parseSessionCreate(one({ as_of: '2026-03-01T10:00:00+01:00' })).resources[0]).toMatchObject({ access: 'read_only', asOf: '2026-03-01T09:00:00.000Z' });
    expect(parseSessionCreate(one({ as_of: '2026-03-01T10:00:00Z', access: 'read_only' })).resources[0]?.access).toBe('read_only');
    expect(codeOf(() => parseSessionCreate(one({ as_of: '2026-03-01T10:00:00Z', access: 'read_write' })))).toBe('invalid_request');
    expect(codeOf(() => parseSessionCreate(one({ as_of: 'yesterday' })))).toBe('invalid_request');
  });
});

describe('the reserved prefix', () => {
  it('no memory path lies at or under /.history, where every mount shows the history', () => {
    expect(codeOf(() => assertMemoryPath('/.history'))).toBe('invalid_path');
    expect(codeOf(() => assertMemoryPath('/.history/notes/a.md'))).toBe('invalid_path');
    expect(assertMemoryPath('/.historyx/a.md')).toBe('/.historyx/a.md');
    expect(assertMemoryPath('/notes/.history/a.md')).toBe('/notes/.history/a.md');
  });
});

describe('sha256 values', () => {
  it('sha256Hex is the lowercase hex of the raw UTF-8 bytes, with no normalisation', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('café')).not.toBe(sha256Hex('cafe\u0301'));
    expect(sha256Hex('é')).toBe(sha256Hex(Uint8Array.from([0xc3, 0xa9])));
  });

  it.each([
    ['64 lowercase hex characters', SHA, 'accepted'],
    ['upper case hex', SHA.toUpperCase(), 'refused'],
    ['63 characters', SHA.slice(1), 'refused'],
    ['65 characters', SHA + '0', 'refused'],
    ['a non-hex character', 'g' + SHA.slice(1), 'refused'],
    ['a "sha256:" prefix', 'sha256:' + SHA.slice(7), 'refused'],
    ['a number', 123, 'refused'],
    ['nothing', undefined, 'refused'],
  ] as const)('%s is %s', (_name, value, ok) => {
    const parse = () => parseSha256(value, 'expected_content_sha256');
    if (ok === 'accepted') expect(parse()).toBe(value);
    else expect(codeOf(parse)).toBe('invalid_request');
  });
});

describe('mount entry names', () => {
  it('a name of 255 bytes is accepted and 256 bytes is refused with name_too_long', () => {
    expect(assertEntryName('n'.repeat(255))).toHaveLength(255);
    expect(assertEntryName('é'.repeat(127) + 'a')).toHaveLength(128);
    expect(codeOf(() => assertEntryName('n'.repeat(256)))).toBe('name_too_long');
    expect(codeOf(() => assertEntryName('é'.repeat(128)))).toBe('name_too_long');
  });
});

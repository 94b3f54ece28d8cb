/** memory_edit's retries (src/service/edits.ts): a change by someone else is re-read and re-applied, unless the caller named content_sha256. */
import { describe, expect, it } from 'vitest';
import { MnemoError } from '../../src/domain/errors.js';
import type { Caller, Memory } from '../../src/domain/types.js';
import { EDIT_ATTEMPTS, createEdit } from '../../src/service/edits.js';
import { sha256Hex } from '../../src/domain/content.js';

const caller = {} as Caller;
const edit = { command: 'insert', insertLine: 0, insertText: 'top' } as const;

/** A memory whose text another writer changes before each of the first `losses` writes lands. */
function contended(losses: number) {
  let content = 'a\n';
  let writes = 0;
  const memory = (): Memory => ({ id: 'mem_x', path: '/m.md', content, contentSha256: sha256Hex(content) }) as Memory;
  return {
    get writes() {
      return writes;
    },
    get content() {
      return content;
    },
    deps: {
      getMemoryToWrite: async () => memory(),
      updateMemory: async (_c: Caller, _s: string, _id: string, w: { content?: string; expectedSha256?: string }) => {
        writes += 1;
        if (writes <= losses) content += 'other\n';
        if (w.expectedSha256 !== sha256Hex(content)) throw new MnemoError('precondition_failed', 'memory mem_x does not have the expected content_sha256; retrieve it and retry');
        content = w.content!;
        return memory();
      },
    },
  };
}

describe('editMemory', () => {
  it('applies the edit again to a fresh read when the memory changed meanwhile', async () => {
    const m = contended(3);
    await createEdit(m.deps)(caller, 'memstore_x', '/m.md', edit);
    expect(m.writes).toBe(4);
    expect(m.content).toBe('top\na\nother\nother\nother\n');
  });

  it('gives up after its attempts, saying the memory kept changing, not naming a precondition', async () => {
    const m = contended(Infinity);
    const err = await createEdit(m.deps)(caller, 'memstore_x', '/m.md', edit).catch((e: MnemoError) => e);
    expect(err).toMatchObject({ code: 'conflict', message: expect.stringContaining('kept changing while the edit was applied') });
    expect((err as MnemoError).message).not.toContain('content_sha256');
    expect(m.writes).toBe(EDIT_ATTEMPTS);
  });

  it('keeps the precondition of a caller who named content_sha256: no second attempt', async () => {
    const m = contended(1);
    const err = await createEdit(m.deps)(caller, 'memstore_x', '/m.md', edit, sha256Hex('a\n')).catch((e: MnemoError) => e);
    expect(err).toMatchObject({ code: 'precondition_failed', message: expect.stringContaining('expected content_sha256') });
    expect(m.writes).toBe(1);
  });
});

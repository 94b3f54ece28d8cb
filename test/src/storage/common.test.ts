/**
 * The code both storage adapters share (src/storage/common/): the check's rules, the row mappings
 * where the engines' flags differ, and the tree walk's paging. The adapters' own suites run it
 * against real databases; these pin what each engine's row shapes must read as alike.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/domain/content.js';
import { checkReceipt, memoryCheck, problemList, type ReceiptCheckRow } from '../../../src/storage/common/check-rules.js';
import { toApiKey, type ApiKeyRow, type MemoryRow } from '../../../src/storage/common/rows.js';
import { walkFrom, walkPage } from '../../../src/storage/common/tree.js';

const receipt = (flags: Pick<ReceiptCheckRow, 'store_exists' | 'version_exists' | 'version_redacted'>): ReceiptCheckRow => ({
  workspace_id: 'wksp_1', route: 'POST /v1/stores/{store}/memories', idem_key: 'k1',
  body: JSON.stringify({ id: 'mem_1', content: 'secret', path: '/a.md' }), store_id: 'store_1', version_id: 'ver_1', ...flags,
});

function linesOf(check: (report: (l: string) => void) => void): string[] {
  const { problems, report } = problemList();
  check(report);
  return problems;
}

function memoryRow(path: string, content: string, over: Partial<MemoryRow> = {}): MemoryRow & { content: string } {
  return {
    seq: 1, id: `mem_${path}`, store_id: 'store_1', path, content, content_sha256: sha256Hex(content), content_size_bytes: content.length,
    version_id: `ver_${path}`, mode: 0o644, created_at: '', updated_at: '', expires_at: null,
    atime_us: null, mtime_us: null, ctime_us: null, uid: null, gid: null, ...over,
  };
}

const headOf = (m: MemoryRow & { content: string }) => ({
  id: m.version_id, memory_id: m.id, store_id: m.store_id, operation: 'modified' as const, redacted_at: null,
  path: m.path, content: m.content, content_sha256: m.content_sha256, content_size_bytes: m.content_size_bytes,
});

describe('the code both storage adapters share', () => {
  it("reads a receipt's flags alike whether they are SQLite's 0/1 and NULL or PostgreSQL's booleans", () => {
    const sqlite = linesOf((r) => checkReceipt(receipt({ store_exists: 1, version_exists: 1, version_redacted: 1 }), r));
    const postgres = linesOf((r) => checkReceipt(receipt({ store_exists: true, version_exists: true, version_redacted: true }), r));
    expect(sqlite).toEqual(['receipt POST /v1/stores/{store}/memories key "k1" in wksp_1: still holds path, content of redacted version ver_1']);
    expect(postgres).toEqual(sqlite);
    const gone = linesOf((r) => checkReceipt(receipt({ store_exists: 1, version_exists: null, version_redacted: null }), r));
    expect(gone).toEqual(linesOf((r) => checkReceipt(receipt({ store_exists: true, version_exists: false, version_redacted: false }), r)));
    expect(gone).toEqual(['receipt POST /v1/stores/{store}/memories key "k1" in wksp_1: points at version ver_1, which does not exist']);
  });

  it('reports a path below a live memory, measures that do not match, and a head version that is missing or a deletion', () => {
    const lines = linesOf((report) => {
      const check = memoryCheck(report);
      const a = memoryRow('/a', 'x');
      check(a, headOf(a));
      const below = memoryRow('/a/b.md', 'y', { content_size_bytes: 7 });
      check(below, null);
      const deleted = memoryRow('/c.md', 'z');
      check(deleted, { ...headOf(deleted), operation: 'deleted' });
    });
    expect(lines).toEqual([
      'memory mem_/a/b.md (/a/b.md) in store_1: path overlaps the live memory at /a',
      'memory mem_/a/b.md (/a/b.md) in store_1: content_size_bytes 7 does not match 1',
      'memory mem_/a/b.md (/a/b.md) in store_1: head version ver_/a/b.md does not exist',
      'memory mem_/c.md (/c.md) in store_1: head version ver_/c.md is a deletion',
    ]);
  });

  it('cuts the problem list after 200 lines and says that more were not shown', () => {
    const lines = linesOf((report) => {
      for (let i = 0; i < 500; i++) report(`problem ${i}`);
    });
    expect(lines).toHaveLength(201);
    expect(lines.at(-1)).toBe('… more problems not shown');
  });

  it("maps an API key row alike from SQLite's 0/1 and PostgreSQL's boolean", () => {
    const row: ApiKeyRow = { id: 'key_1', workspace_id: 'wksp_1', name: 'ops', role: 'admin', store_ids: null, all_workspaces: 1, created_at: '', revoked_at: null };
    expect(toApiKey(row).allWorkspaces).toBe(true);
    expect(toApiKey({ ...row, all_workspaces: true })).toEqual(toApiKey(row));
    expect(toApiKey({ ...row, all_workspaces: 0 })).toEqual(toApiKey({ ...row, all_workspaces: false }));
    expect(toApiKey({ ...row, all_workspaces: false }).allWorkspaces).toBe(false);
  });

  it('ends a walk page at the first subdirectory, then asks for one row; a page of files asks for more', () => {
    const rows = ['/d/a.md', '/d/b.md', '/d/sub/c.md', '/d/z.md'].map((p) => memoryRow(p, ''));
    const jumped = walkPage('/d/', rows, { ...walkFrom({ key: '/d/', inclusive: false }), batch: 4 });
    expect(jumped.children.map((c) => (c.item.type === 'memory' ? c.item.row.path : c.item.path))).toEqual(['/d/a.md', '/d/b.md', '/d/sub/']);
    expect(jumped.next).toEqual({ key: jumped.children[2]!.resume.k, inclusive: true, batch: 1 });
    const files = walkPage('/d/', rows.slice(0, 1), walkFrom({ key: '/d/', inclusive: false }));
    expect(files.next).toEqual({ key: '/d/a.md', inclusive: false, batch: 4 });
    expect(walkPage('/d/', rows.slice(0, 1), { key: '/d/', inclusive: false, batch: 2 }).next).toBeNull();
  });
});

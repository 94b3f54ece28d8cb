/**
 * Pins a rule of the SQLite adapter's statements: a LIMIT or OFFSET taken from a parameter is
 * written `LIMIT +?` (or `+@name`), never `LIMIT ?`. SQLite (3.53, as better-sqlite3 12 builds it)
 * marks a statement whose LIMIT or OFFSET is a bare parameter to be prepared again whenever that
 * parameter is bound, so such a statement was parsed and planned on every run: 7 µs against 3 µs
 * for a one-row range read, and the expiry check every write makes (a join, `LIMIT ?`) was about a
 * tenth of a mount save's serving-thread time (test/bench/README.md, stop 38). The unary plus makes
 * the limit an expression SQLite does not look into, with the same value.
 */
import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
const adapter = join(root, 'src/storage/sqlite');

describe("the SQLite adapter's bound limits", () => {
  it('no statement takes its LIMIT or OFFSET from a bare parameter', () => {
    const bare: string[] = [];
    for (const e of readdirSync(adapter, { withFileTypes: true, recursive: true })) {
      if (!e.isFile() || !e.name.endsWith('.ts')) continue;
      const file = join(e.parentPath, e.name);
      readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        // `?`, `?1`, `@x`, `:x` or `$x` right after the word; `${…}` is a literal written into the text.
        if (/\b(LIMIT|OFFSET)\s+([?@:]|\$(?!\{))/.test(line)) bare.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(bare).toEqual([]);
  });

  it('a limit and an offset written with the plus bound as before: the same rows, and a negative limit is none', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 10; i++) insert.run(`k${i}`);
      const plain = db.prepare('SELECT k FROM t WHERE k > ? ORDER BY k LIMIT ? OFFSET ?').pluck();
      const plus = db.prepare('SELECT k FROM t WHERE k > ? ORDER BY k LIMIT +? OFFSET +?').pluck();
      for (const [after, limit, offset] of [['k0', 3, 0], ['k2', 2, 1], ['', -1, 0], ['k5', 0, 0], ['k', 100, 8]] as const) {
        expect(plus.all(after, limit, offset)).toEqual(plain.all(after, limit, offset));
      }
      expect(plus.all('', -1, 0)).toHaveLength(10);
    } finally {
      db.close();
    }
  });
});

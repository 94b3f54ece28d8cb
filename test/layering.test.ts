/**
 * Pins the layering of DESIGN §3: src/ is the core and imports nothing from fs/ or api/, except
 * src/main.ts, the one composition root; fs/ and api/ never import each other; the files of src/
 * import each other along a DAG.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

function sources(dir: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function imports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]!);
}

/** The src/ files a file imports by relative path (type-only imports too: a cycle of types is still a knot). */
function localImports(file: string, known: Set<string>): string[] {
  return imports(file)
    .filter((i) => i.startsWith('.'))
    .map((i) => normalize(join(dirname(file), i.replace(/\.js$/, existsSync(join(root, dirname(file), i.replace(/\.js$/, '.tsx'))) ? '.tsx' : '.ts'))))
    .filter((f) => known.has(f));
}

/** Every import cycle found by a depth-first walk, each written a → b → a. */
function importCycles(files: string[]): string[] {
  const known = new Set(files);
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    path.push(f);
    for (const dep of localImports(f, known)) {
      if (state.get(dep) === 'open') cycles.push([...path.slice(path.indexOf(dep)), dep].join(' → '));
      else if (!state.has(dep)) visit(dep);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of [...files].sort()) if (!state.has(f)) visit(f);
  return cycles;
}

describe('layering', () => {
  it('src/ imports nothing from fs/ or api/ except the composition root src/main.ts', () => {
    const offenders = sources('src')
      .filter((f) => f !== 'src/main.ts')
      .flatMap((f) => imports(f).filter((i) => /^(\.\.\/)+(fs|api)\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offenders).toEqual([]);
  });

  it('src/main.ts is the file that wires the faces', () => {
    const wired = imports('src/main.ts');
    expect(wired.some((i) => i.startsWith('../api/'))).toBe(true);
  });

  it('the command line loads the HTTP face, the mount and the PostgreSQL client only in the commands that use them (dynamic imports)', () => {
    // A static import would load them for `mnemo --help` and every one-shot command on SQLite too.
    const statics = (file: string) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/^import\s+(?!type\b)[^;]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => `${file} → ${m[1]!}`);
    const heavy = ['src/main.ts', ...sources('src/cli')].flatMap(statics).filter((i) => /→ (\.\.\/)+(api|fs)\/|→ .*storage\/postgres\/open\.js$/.test(i));
    expect(heavy).toEqual([]);
  });

  it('fs/ and api/ import the core only through src/index.ts and never each other', () => {
    const offenders = [...sources('fs'), ...sources('api')].flatMap((f) =>
      imports(f)
        .filter((i) => i.startsWith('.'))
        .filter((i) => {
          const face = f.split('/')[0];
          const other = face === 'fs' ? 'api' : 'fs';
          return new RegExp(`(^|/)${other}/`).test(i) || (/\/src\//.test(i) && !/\/src\/index\.js$/.test(i));
        })
        .map((i) => `${f} → ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('no face reaches storage: fs/, api/ and api/mcp/ call the service, which hands out no storage port', () => {
    // The core's surface for the faces exports no storage type, and no face names one or reaches a `.storage`.
    const surface = readFileSync(join(root, 'src/index.ts'), 'utf8');
    expect(surface).not.toMatch(/\bStorage\b|openSqliteStorage|\/storage\/sqlite/);
    const code = (f: string) => readFileSync(join(root, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    const offenders = [...sources('fs'), ...sources('api')].filter((f) => /\bStorage\b|\.storage\b|openSqliteStorage/.test(code(f)));
    expect(offenders).toEqual([]);
  });

  it('the service object has no storage member a face could reach through it', async () => {
    const { openCore } = await import('./helpers/core.js');
    const { service } = await openCore();
    expect(Object.keys(service)).not.toContain('storage');
    expect(Object.keys(service)).toEqual(expect.arrayContaining(['sessions', 'idempotency', 'mountReader', 'keys']));
  });

  it('no two files of src/ import each other, directly or around a longer loop', () => {
    expect(importCycles(sources('src'))).toEqual([]);
  });

  it('the cycle check finds a loop like the one validate.ts and validate-continuity.ts once made', () => {
    // The walk reads real files, so the fixture is the pair of files as they were: each imported the other.
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-cycle-'));
    try {
      const rel = relative(root, dir);
      writeFileSync(join(dir, 'validate.ts'), "import { parseExpiry } from './validate-continuity.js';\n");
      writeFileSync(join(dir, 'validate-continuity.ts'), "import { parseLimit, type Query } from './validate.js';\n");
      writeFileSync(join(dir, 'ids.ts'), "export const x = 1;\n");
      expect(importCycles(sources(rel))).toEqual([`${rel}/validate-continuity.ts → ${rel}/validate.ts → ${rel}/validate-continuity.ts`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/domain/ holds pure rules: it imports no storage, no face and no Node module but hashing', () => {
    const offenders = sources('src/domain').flatMap((f) =>
      imports(f).filter((i) => /\/storage\/|^(\.\.\/)+(fs|api)\/|^node:(?!crypto$)|^better-sqlite3$/.test(i)).map((i) => `${f} → ${i}`),
    );
    expect(sources('src/domain').length).toBeGreaterThan(0);
    expect(offenders).toEqual([]);
  });

  it('the two storage adapters share code only through src/storage/common/: neither imports the other, and common/ neither', () => {
    const adapters = ['sqlite', 'postgres'];
    const offenders = ['common', ...adapters].flatMap((own) =>
      sources(`src/storage/${own}`).flatMap((f) =>
        imports(f)
          .filter((i) => i.startsWith('.'))
          .filter((i) => adapters.some((a) => a !== own && normalize(join(dirname(f), i)).startsWith(`src/storage/${a}/`)))
          .map((i) => `${f} → ${i}`),
      ),
    );
    expect(sources('src/storage/common').length).toBeGreaterThan(0);
    expect(offenders).toEqual([]);
  });

  it('no file disables a lint or type check to get around the rules', () => {
    const all = [...sources('src'), ...sources('fs'), ...sources('api')];
    const disabled = all.filter((f) => /eslint-disable|@ts-ignore|@ts-nocheck/.test(readFileSync(join(root, f), 'utf8')));
    expect(disabled).toEqual([]);
  });
});

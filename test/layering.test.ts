/**
 * Pins the layering of DESIGN §3: src/ is the core and imports nothing from fs/ or api/, except
 * src/main.ts, the one composition root; fs/ and api/ never import each other.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

function sources(dir: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function imports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]!);
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

  it('src/domain/ holds pure rules: it imports no storage, no face and no Node module', () => {
    const offenders = sources('src/domain').flatMap((f) =>
      imports(f).filter((i) => /\/storage\/|^(\.\.\/)+(fs|api)\/|^node:|^better-sqlite3$/.test(i)).map((i) => `${f} → ${i}`),
    );
    expect(sources('src/domain').length).toBeGreaterThan(0);
    expect(offenders).toEqual([]);
  });

  it('no file disables a lint or type check to get around the rules', () => {
    const all = [...sources('src'), ...sources('fs'), ...sources('api')];
    const disabled = all.filter((f) => /eslint-disable|@ts-ignore|@ts-nocheck/.test(readFileSync(join(root, f), 'utf8')));
    expect(disabled).toEqual([]);
  });
});

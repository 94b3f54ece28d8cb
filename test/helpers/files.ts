/** @module Which files hold some bytes: for the tests that prove redacted text left the disk. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) return [];
    return st.isDirectory() ? filesUnder(p) : st.isFile() ? [p] : [];
  });
}

/** Files among `files` whose bytes contain `secret`. */
export function holding(files: string[], secret: string): string[] {
  const needle = Buffer.from(secret);
  return files.filter((f) => readFileSync(f).includes(needle));
}

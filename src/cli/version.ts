/** @module mnemo's own version: `mnemo --version`, and the OpenAPI document's `info.version`. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let known: string | null = null;

/**
 * The version in the package.json this file ships in (src/ and dist/src/ both sit below it). Read
 * once: the HTTP MCP face builds a server, and asks, for every request, on the serving thread.
 */
export function packageVersion(): string {
  known ??= readPackageVersion();
  return known;
}

function readPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mnemo' && pkg.version) return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

/** @module A fresh temporary directory per test, removed when the test finishes. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** Makes a directory under the OS temp dir; call it inside a test (or a beforeEach). */
export function tmpDir(prefix = 'mnemo-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

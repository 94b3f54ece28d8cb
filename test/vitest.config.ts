import { defineConfig } from 'vitest/config';

// `npm test` type-checks and builds first: the suites run from TypeScript, and the
// server child processes they start run the compiled dist/.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL cluster per run for the PostgreSQL adapter's tests (or their skip
    // reason); then one temp directory per run, holding every test's, removed even when the run is
    // interrupted (teardowns run in reverse: the directory goes before the cluster stops).
    globalSetup: ['test/helpers/postgres-cluster.ts', 'test/helpers/run-dir.ts'],
    // A test still running after 40 s prints what its processes wait on (a hang's only trace).
    setupFiles: ['test/helpers/watchdog.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

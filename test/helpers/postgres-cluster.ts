/**
 * @module vitest globalSetup: one throwaway PostgreSQL cluster per test run, for the PostgreSQL
 * adapter's tests (test/helpers/postgres.ts). CI exports MNEMO_TEST_DATABASE_URL (.ci/run starts
 * the cluster); otherwise, as root with Debian's postgresql installed, this starts one
 * (pg-cluster.ts), stopped and removed at the end. Without either, the PG tests skip.
 */
import type { TestProject } from 'vitest/node';
import { cleanUpOnExit } from './on-exit.js';
import { clusterUnavailable, startCluster, PG_BIN } from './pg-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A URL of a database on the test cluster (the one to CREATE DATABASE from), or why there is none. */
    postgres: { url: string } | { skip: string };
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env['MNEMO_TEST_DATABASE_URL'];
  if (given) {
    project.provide('postgres', { url: given });
    return undefined;
  }
  if (clusterUnavailable() !== null) {
    const why = process.env['CI']
      ? 'CI must set MNEMO_TEST_DATABASE_URL (.ci/run starts a cluster)'
      : `no PostgreSQL: set MNEMO_TEST_DATABASE_URL, or run as root with ${PG_BIN}/initdb installed (apt-get install postgresql)`;
    if (process.env['CI']) throw new Error(why);
    project.provide('postgres', { skip: why });
    return undefined;
  }
  const cluster = await startCluster();
  // A run that is interrupted skips the teardown: the cluster is stopped on the way out anyway.
  cleanUpOnExit(cluster.remove);
  project.provide('postgres', { url: cluster.url });
  return cluster.remove;
}

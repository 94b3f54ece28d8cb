/**
 * The Storage port's conformance suites (STYLE rule 4), one per role (test/src/storage/): every
 * adapter runs them all. Each talks to the port directly, without the service, and pins what each
 * operation does on its own.
 */
import { runAuditSuite } from './storage/audit.suite.js';
import { runCheckpointSuite } from './storage/checkpoints.suite.js';
import { runConsoleSessionSuite } from './storage/console-sessions.suite.js';
import { runFeedSuite } from './storage/feed.suite.js';
import { runForkSuite } from './storage/forks.suite.js';
import type { MakeStorage } from './storage/fixture.js';
import { runHistorySuite } from './storage/history.suite.js';
import { runKeySuite } from './storage/keys.suite.js';
import { runMaintenanceSuite } from './storage/maintenance.suite.js';
import { runMemorySuite } from './storage/memories.suite.js';
import { runMountViewSuite } from './storage/mount-view.suite.js';
import { runReceiptSuite } from './storage/receipts.suite.js';
import { runSearchSuite } from './storage/search.suite.js';
import { runSessionSuite } from './storage/sessions.suite.js';
import { runStoreSuite } from './storage/stores.suite.js';
import { runTransactionSuite } from './storage/transactions.suite.js';

export type { MakeStorage } from './storage/fixture.js';

/** Every role's suite, each in a describe block named for its role. */
export const ROLE_SUITES: readonly ((makeStorage: MakeStorage) => void)[] = [
  runStoreSuite,
  runKeySuite,
  runMemorySuite,
  runFeedSuite,
  runForkSuite,
  runMountViewSuite,
  runHistorySuite,
  runSessionSuite,
  runReceiptSuite,
  runCheckpointSuite,
  runSearchSuite,
  runTransactionSuite,
  runMaintenanceSuite,
  runAuditSuite,
  runConsoleSessionSuite,
];

export function runStorageSuite(makeStorage: MakeStorage): void {
  for (const run of ROLE_SUITES) run(makeStorage);
}

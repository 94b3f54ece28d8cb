/**
 * @module When a write is on disk (DESIGN §5). API writes are durable when they are answered. A
 * mount's writes follow POSIX, as ext4 and XFS do: with MNEMO_MOUNT_SYNC=fsync (the default) a save
 * at close() commits without an fsync (safe from a crash of mnemo: the commit is in the OS page
 * cache), fsync() on the file waits for a WAL sync, and a background sync makes every closed version
 * durable within SYNC_INTERVAL_MS of its close. With `close`, a mount's writes are durable at commit,
 * as the API's are. In either mode a write the mount asks durable (a save fsync() makes, or the
 * rename that stores a temp file fsync()ed before it, fs/save-points.ts) commits durably, on the
 * event loop as the API's do: a relaxed commit, then the WAL sync on the thread pool, took 1.5x as
 * long (test/bench/README.md, stops 31 and 32). The rule lives here, once; the storage adapter only knows
 * durable or not.
 */
import type { JournaledWrite, Storage } from '../storage/port.js';
import type { Face } from '../domain/types.js';

export const MOUNT_SYNC_MODES = ['fsync', 'close'] as const;
export type MountSync = (typeof MOUNT_SYNC_MODES)[number];

/** How long a closed version may wait for the disk in `fsync` mode (plus the sync's own time). */
export const SYNC_INTERVAL_MS = 100;

export interface Durability {
  /**
   * Runs one storage write made through `face` over `storage` (the outer port, or a transaction's
   * `tx`: inside one, the outermost decides), durable at commit or not as the rule says. A mount's
   * write given as data too (`journal`, the same write as `fn`) may be answered before its commit,
   * kept in the adapter's journal meanwhile (AtomicOptions.journal). `durable`: this one write is
   * durable at commit in any mode (a mount asked for it with fsync before it could be stored).
   */
  write<T>(storage: Storage, face: Face, fn: (storage: Storage) => Promise<T>, journal?: JournaledWrite, durable?: boolean): Promise<T>;
  /**
   * Runs `fn` as one transaction not durable at its commit (a fork's batches: its publish is), and
   * has the background sync put it on disk within SYNC_INTERVAL_MS, as a mount's write is: every
   * relaxed commit arms the sync, or the gauge of commits not on disk stayed up until a mount saved.
   */
  relaxed<T>(fn: (storage: Storage) => Promise<T>): Promise<T>;
  /** Resolves once every write committed before the call is on disk: fsync(2) on a mount. */
  sync(): Promise<void>;
  /** Commits not known to be on disk yet (a gauge). */
  unsynced(): number;
  /** Ends the background sync after one last sync (shutdown, before the storage closes). */
  stop(): Promise<void>;
}

export interface DurabilityOptions {
  storage: Pick<Storage, 'atomic' | 'unsyncedCommits' | 'syncCommits'>;
  mountSync?: MountSync;
  /** Runs `fn` after `ms` and returns a cancel: setTimeout (unref'd) unless a test injects a clock. */
  schedule?: (fn: () => void, ms: number) => () => void;
  /** Told when a background sync fails; the next one tries again. */
  onError?: (err: unknown) => void;
}

function later(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

export function createDurability({ storage, mountSync = 'fsync', schedule = later, onError = () => {} }: DurabilityOptions): Durability {
  let cancel: (() => void) | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  /** At most one background sync per interval, and only while some commit waits for one. */
  function arm(): void {
    if (cancel || running || stopped) return;
    cancel = schedule(tick, SYNC_INTERVAL_MS);
  }

  function tick(): void {
    cancel = null;
    running = storage.syncCommits().then(
      () => {},
      (err: unknown) => onError(err),
    );
    void running.then(() => {
      running = null;
      // Commits that landed during the sync wait for the next interval.
      if (storage.unsyncedCommits() > 0) arm();
    });
  }

  return {
    async write<T>(over: Storage, face: Face, fn: (storage: Storage) => Promise<T>, journal?: JournaledWrite, durable = false): Promise<T> {
      if (mountSync === 'close' || face !== 'mount' || durable) return fn(over);
      const result = await over.atomic(fn, journal ? { durable: false, journal } : { durable: false });
      arm();
      return result;
    },
    async relaxed<T>(fn: (storage: Storage) => Promise<T>): Promise<T> {
      const result = await storage.atomic(fn, { durable: false });
      arm();
      return result;
    },
    sync: () => storage.syncCommits(),
    unsynced: () => storage.unsyncedCommits(),
    async stop(): Promise<void> {
      stopped = true;
      cancel?.();
      cancel = null;
      await running;
      await storage.syncCommits();
    },
  };
}

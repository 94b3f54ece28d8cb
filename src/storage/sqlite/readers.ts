/**
 * @module Reader connections in worker threads: the reads that grow with the store (sqlite/reads.ts)
 * run there, so a full-text search over a big store never holds up the event loop that serves
 * every mount and request. WAL lets readers run beside the one writer; a small pool (DEFAULT_READERS)
 * is enough, since two cores are the common host and every worker also competes for them.
 *
 * A call costs a message each way and a structured clone of the answer (about 50–100 µs for a small
 * page: test/bench/README.md): nothing for a search, much for a point lookup, which is why those stay
 * on the serving connection. A `:memory:` database has no file to share, and a build without its
 * compiled worker (the TypeScript sources alone) cannot start one: both run the same reads inline.
 *
 * Two writes run on such a thread too (one of its own, started at the first write, at the
 * process's priority), on writable connections it opens for them: a directory move, one
 * transaction for every memory under the directory (a version each: 20,000 took 3.3 s), and the
 * search index's heavy turns (secure-delete batches, an erasure's merge steps: up to a tenth of a
 * second each). On the serving thread they held every mount and request of the server that long.
 * Here the serving connection's writers wait at its gate meanwhile (port-view.ts) while its point
 * reads and the reader threads go on answering, from the store as it was until the write commits.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MnemoError, type ErrorCode, type ErrorDetails } from '../../domain/errors.js';
import type { AsyncReads, AsyncWrites, ReadMethod, ReadReply, ReadRequest, SyncReads, WriteMethod } from './reads.js';

export const DEFAULT_READERS = 2;

/**
 * The nice value of a reader thread. On a host whose cores are all busy, the kernel then gives the
 * serving thread its turn first, so a search running there delays the mounts' event loop less;
 * alone on a core, a reader runs at full speed anyway. The writes run on a thread of their own at
 * the process's priority: the serving connection's writers wait at its gate for each, and at nice
 * 10 beside two busy processes an erasure of 20,000 notes took 6.1 s instead of 1.2 s.
 */
const READER_NICE = 10;

export interface Readers {
  reads: AsyncReads;
  /**
   * Writes on a worker's writable connections (a directory move, the search index's heavy turns), or
   * null when reads run inline (then the serving connection makes them). The caller holds the
   * serving connection's writers back meanwhile.
   */
  writes: AsyncWrites | null;
  /** How many reads run in worker threads (0: inline on the serving connection). */
  readonly threads: number;
  /** Stops the workers; reads still in flight reject. */
  close(): void;
}

const WRITE_METHODS: readonly WriteMethod[] = ['moveTree', 'indexSearchBacklog', 'eraseStep', 'purgeDeletedStores'];
const METHODS: readonly ReadMethod[] = [
  'searchMemories', 'listMemories', 'listStores', 'listVersions', 'listChanges', 'integrityCheck', 'domainCheck', 'searchBacklog', 'listDirectoryAsOf', 'hasMemoriesUnderAsOf',
  'listDirectory', 'listDirectoryNames', 'listTextHolders',
];

/**
 * `inline` answers when no thread can (`threads` 0, `:memory:`, no compiled worker); `clock` is read
 * once per call and is what `mnemo_now()` answers in the worker, so injected clocks hold there too.
 */
export function openReaders(file: string, threads: number, clock: () => string, inline: SyncReads): Readers {
  const entry = file === ':memory:' || threads <= 0 ? null : workerEntry();
  if (entry === null) return inlineReaders(inline);
  const pool: Reader[] = [];
  /** The thread for the writes, started at the first one. */
  let writer: Reader | null = null;
  let nextId = 1;
  let closed = false;

  function pick(): Reader {
    // The least busy worker; a new one while the pool is not full and every worker has work.
    let best: Reader | undefined;
    for (const r of pool) if (!best || r.pending.size < best.pending.size) best = r;
    if (best && (best.pending.size === 0 || pool.length >= threads)) return best;
    const r = startReader(entry!, file, READER_NICE, (r) => pool.splice(pool.indexOf(r) >>> 0, 1));
    pool.push(r);
    return r;
  }

  function writerThread(): Reader {
    return (writer ??= startReader(entry!, file, null, () => {
      writer = null;
    }));
  }

  function call(method: ReadMethod | WriteMethod, args: unknown[], thread: () => Reader = pick): Promise<unknown> {
    if (closed) return Promise.reject(new MnemoError('internal', 'storage is closed'));
    const r = thread();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      r.pending.set(id, { resolve, reject });
      // Referenced only while it has work: an idle pool never keeps a CLI or a test process alive.
      if (r.pending.size === 1) r.worker.ref();
      r.worker.postMessage({ id, method, args, now: clock() } satisfies ReadRequest);
    });
  }

  const reads = Object.fromEntries(METHODS.map((m) => [m, (...args: unknown[]) => call(m, args)])) as unknown as AsyncReads;
  return {
    reads,
    writes: Object.fromEntries(WRITE_METHODS.map((m) => [m, (...args: unknown[]) => call(m, args, writerThread)])) as unknown as AsyncWrites,
    threads,
    close() {
      closed = true;
      for (const r of pool.splice(0)) r.stop(new MnemoError('internal', 'storage closed during a read'));
      writer?.stop(new MnemoError('internal', 'storage closed during a write'));
    },
  };
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Reader {
  worker: Worker;
  pending: Map<number, Pending>;
  stop(err: Error): void;
}

/** A thread running reader-worker.ts at `nice` (null: the process's priority). */
function startReader(entry: URL, file: string, nice: number | null, gone: (r: Reader) => void): Reader {
  const worker = new Worker(entry, { workerData: { file, nice } });
  worker.unref();
  const pending = new Map<number, Pending>();
  let ended = false;
  const end = (err: Error): void => {
    if (ended) return;
    ended = true;
    gone(reader);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const reader: Reader = {
    worker,
    pending,
    stop(err) {
      end(err);
      void worker.terminate();
    },
  };
  worker.on('message', (m: ReadReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) worker.unref();
    if (m.ok) p.resolve(m.value);
    else p.reject(revive(m.error));
  });
  // A worker that dies takes only its own calls with it; the next call starts another.
  worker.on('error', (err) => end(new MnemoError('internal', `storage reader failed: ${err.message}`, {}, { cause: err })));
  worker.on('exit', (code) => end(new MnemoError('internal', `storage reader exited (${code})`)));
  return reader;
}

/** The worker's error as the caller would have seen it inline: a MnemoError keeps its code and details. */
function revive(e: Extract<ReadReply, { ok: false }>['error']): Error {
  const err = e.mnemo ? new MnemoError(e.code as ErrorCode, e.message, e.details as ErrorDetails) : Object.assign(new Error(e.message), e.code.startsWith('SQLITE_') ? { code: e.code } : {});
  if (e.stack) err.stack = e.stack;
  return err;
}

function inlineReaders(inline: SyncReads): Readers {
  const reads = Object.fromEntries(
    METHODS.map((m) => [m, (...args: unknown[]) => new Promise((resolve) => resolve((inline[m] as (...a: unknown[]) => unknown)(...args)))]),
  ) as unknown as AsyncReads;
  return { reads, writes: null, threads: 0, close() {} };
}

/**
 * The compiled worker beside this module in dist/; under the tests' TypeScript loader this module is
 * a .ts source, and the worker (plain Node, no loader) runs the build's copy of it.
 */
function workerEntry(): URL | null {
  const here = import.meta.url;
  const url = here.endsWith('.ts') ? new URL('../../../dist/src/storage/sqlite/reader-worker.js', here) : new URL('./reader-worker.js', here);
  return existsSync(fileURLToPath(url)) ? url : null;
}

/**
 * @module The change feed (issue 15): a store's versions in commit order, as pages from a cursor
 * and as a follow that wakes on this server's commits and polls for other processes'. Every read
 * checks the caller's grant as the version list does, and reads a page after the last cursor
 * handed out, so a follower never skips or repeats a version, whatever writes run beside it.
 */
import { setMaxListeners } from 'node:events';
import { decodeChangeCursor, encodeChangeCursor } from '../domain/change-cursor.js';
import type { Caller, ChangeItem, ChangePage, Store } from '../domain/types.js';
import type { Storage } from '../storage/port.js';
import { CHANGES_LIMITS } from '../validate/history.js';
import type { CommitSignal } from './commit-signal.js';

/** A follower reads pages of the largest size a client may ask for. */
const FOLLOW_PAGE = CHANGES_LIMITS.listMax;
/** How often a follower looks for commits made by other processes. */
export const FEED_POLL_MS = 500;
/**
 * Every this many polls a follower reads its next page even if the change mark stood still: an
 * adapter whose mark cannot see every other writer (another host) then still delivers within seconds.
 */
const READ_EVERY_POLLS = 10;

/** Runs `fn` every `ms` until the returned cancel: setInterval (unref'd) unless a test injects one. */
export type Every = (fn: () => void, ms: number) => () => void;

export const every: Every = (fn, ms) => {
  const t = setInterval(fn, ms);
  t.unref();
  return () => clearInterval(t);
};

export interface FeedOptions {
  storage: Pick<Storage, 'listChanges' | 'changeMark' | 'keyMark'>;
  /** The service's read check on a store (awaited: it may answer with a promise). */
  readable: (caller: Caller, storeId: string) => Store | Promise<Store>;
  /** The caller as its key stands now: throws `unauthenticated` once the key is revoked (keys.ts `current`). */
  current: (caller: Caller) => Promise<Caller>;
  signal: CommitSignal;
  pollMs?: number;
  every?: Every;
}

export interface ChangesRequest {
  /** A cursor from this feed, or null for the start of the store's history. */
  after: string | null;
  /** Where `after` came from, named when it is refused: `after` unless told (an event stream's `Last-Event-ID`). */
  afterField?: string;
  limit: number;
}

export function createFeed({ storage, readable, current, signal, pollMs = FEED_POLL_MS, every: schedule = every }: FeedOptions) {
  let following = 0;
  /** Set at shutdown: every follower ends, and no new one starts streaming. */
  const stopping = new AbortController();
  // Every follower listens on this one signal (and removes its listener when it ends), so it has
  // as many listeners as streams are open: Node's leak warning past 10 would be a false alarm.
  setMaxListeners(0, stopping.signal);

  async function listChanges(caller: Caller, storeId: string, q: ChangesRequest): Promise<ChangePage> {
    await readable(caller, storeId);
    return readPage(storeId, q);
  }

  async function readPage(storeId: string, q: ChangesRequest): Promise<ChangePage> {
    const after = q.after === null ? 0 : decodeChangeCursor(q.after, q.afterField ?? 'after', storeId);
    const rows = await storage.listChanges(storeId, { after, limit: q.limit });
    const cursor = (seq: number) => encodeChangeCursor(seq, storeId);
    const data = rows.map((r): ChangeItem => ('version' in r ? { cursor: cursor(r.seq), version: r.version } : { cursor: cursor(r.seq), pruned: r.pruned }));
    return { data, nextAfter: data.length ? data[data.length - 1]!.cursor : cursor(after) };
  }

  /**
   * Checks at once that the caller may read the store and that `from.after` is a cursor of its
   * feed, so a refusal comes before anything streams; then answers the follower: pages after that
   * cursor as they commit (see `pages`).
   */
  async function follow(caller: Caller, storeId: string, from: Pick<ChangesRequest, 'after' | 'afterField'>, abort: AbortSignal): Promise<AsyncGenerator<ChangePage>> {
    await readable(caller, storeId);
    const after = from.after === null ? 0 : decodeChangeCursor(from.after, from.afterField ?? 'after', storeId);
    return pages(caller, storeId, encodeChangeCursor(after, storeId), abort);
  }

  /**
   * Pages after `cursor` as they commit, until `abort` fires, or until the caller may no longer read
   * them: the store went (not_found), or the caller's key was revoked (unauthenticated); the error
   * ends the loop by throwing. The grant is checked after every read, so a page read as the store
   * goes is not handed out. The key is read again before every page handed out, and whenever the
   * storage's key mark moves (a revoke here or one heard of), so an idle stream ends within a poll
   * of a revoke without a lookup per poll. Nothing is set up (listener, timer) before the first `next()`.
   */
  async function* pages(caller: Caller, storeId: string, cursor: string, abort: AbortSignal): AsyncGenerator<ChangePage> {
    let dirty = true;
    let wake: (() => void) | null = null;
    const poke = () => {
      dirty = true;
      wake?.();
    };
    const unsubscribe = signal.subscribe((id) => {
      if (id === null || id === storeId) poke();
    });
    let mark = await storage.changeMark();
    // The key mark the caller's key was last read at: none yet, so the first read reads it.
    let keyRead: number | null = null;
    let polls = 0;
    const look = async () => {
      const m = await storage.changeMark();
      if (m !== mark || storage.keyMark() !== keyRead || ++polls >= READ_EVERY_POLLS) {
        mark = m;
        polls = 0;
        poke();
      }
    };
    // A mark that cannot be read: read the page anyway, whose failure then ends the stream with its error.
    const cancelPoll = schedule(() => void look().catch(poke), pollMs);
    const onAbort = () => wake?.();
    abort.addEventListener('abort', onAbort);
    stopping.signal.addEventListener('abort', onAbort);
    following += 1;
    try {
      while (!abort.aborted && !stopping.signal.aborted) {
        if (!dirty) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
          continue;
        }
        // Cleared before the read: a commit that lands while it runs pokes again, and is read next.
        dirty = false;
        // Taken before the read: a revoke that lands while it runs moves the mark again, and is read next.
        const keys = storage.keyMark();
        const page = await readPage(storeId, { after: cursor, limit: FOLLOW_PAGE });
        if (page.data.length > 0 || keys !== keyRead) {
          caller = await current(caller);
          keyRead = keys;
        }
        await readable(caller, storeId);
        if (page.data.length === 0) continue;
        cursor = page.nextAfter;
        if (page.data.length === FOLLOW_PAGE) dirty = true;
        yield page;
      }
    } finally {
      following -= 1;
      abort.removeEventListener('abort', onAbort);
      stopping.signal.removeEventListener('abort', onAbort);
      cancelPoll();
      unsubscribe();
    }
  }

  return {
    listChanges,
    follow,
    /** Followers running now (streams open): a gauge, and the tests' check that they end. */
    following: () => following,
    /** Ends every follower (their streams close): the server's shutdown, before it closes its connections. */
    stop: () => stopping.abort(),
    /** Subscribers to this server's commit signal (one per follower). */
    listeners: () => signal.count(),
  };
}

export type Feed = ReturnType<typeof createFeed>;

/**
 * @module The change feed (issue 15): a store's versions in commit order, as pages from a cursor
 * and as a follow that wakes on this server's commits and polls for other processes'. Every read
 * checks the caller's grant as the version list does, and reads a page after the last cursor
 * handed out, so a follower never skips or repeats a version, whatever writes run beside it.
 * Followers share one poll of the storage's marks (one timer, one read per poll, however many
 * streams are open), and each workspace may hold MNEMO_WORKSPACE_MAX_FEED_STREAMS streams at once.
 */
import { setMaxListeners } from 'node:events';
import { decodeChangeCursor, encodeChangeCursor } from '../domain/change-cursor.js';
import { MnemoError } from '../domain/errors.js';
import type { Caller, ChangeItem, ChangePage, Store } from '../domain/types.js';
import type { Storage } from '../storage/port.js';
import { CHANGES_LIMITS } from '../validate/history.js';
import type { CommitSignal } from './commit-signal.js';
import { DEFAULT_LIMITS } from './limits.js';

/** A follower reads pages of the largest size a client may ask for. */
const FOLLOW_PAGE = CHANGES_LIMITS.listMax;
/** How often the followers look for commits made by other processes (one look for all of them). */
export const FEED_POLL_MS = 500;
/**
 * Every this many polls a follower reads its next page even if the change mark stood still: an
 * adapter whose mark cannot see every other writer (another host) then still delivers within seconds.
 * Followers take turns (a tenth of them at each poll), so these reads never all come at once.
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
  /** Event streams one workspace may hold open at once (MNEMO_WORKSPACE_MAX_FEED_STREAMS). */
  maxStreams?: number;
}

export interface ChangesRequest {
  /** A cursor from this feed, or null for the start of the store's history. */
  after: string | null;
  /** Where `after` came from, named when it is refused: `after` unless told (an event stream's `Last-Event-ID`). */
  afterField?: string;
  limit: number;
}

export function createFeed({
  storage, readable, current, signal, pollMs = FEED_POLL_MS, every: schedule = every, maxStreams = DEFAULT_LIMITS.maxFeedStreams,
}: FeedOptions) {
  let following = 0;
  /** Set at shutdown: every follower ends, and no new one starts streaming. */
  const stopping = new AbortController();
  // Every follower listens on this one signal (and removes its listener when it ends), so it has
  // as many listeners as streams are open: Node's leak warning past 10 would be a false alarm.
  setMaxListeners(0, stopping.signal);
  const poll = sharedPoll(storage, pollMs, schedule);
  /** Event streams open per workspace (operator keys: one bucket of their own). */
  const streams = new Map<string, number>();

  /**
   * Admits one more event stream of the caller, before it opens, or refuses it (`overloaded`, 503)
   * when its workspace holds `maxStreams` already; the returned function gives its place back. An
   * operator key counts apart from every workspace, whichever it acts in, so no workspace starves it.
   */
  function admitStream(caller: Caller): () => void {
    const tenant = caller.grant?.operator ? '*operator' : caller.workspaceId;
    const open = streams.get(tenant) ?? 0;
    if (open >= maxStreams) {
      throw new MnemoError(
        'overloaded',
        `this workspace has ${open} change-feed streams open on this server already, its limit (MNEMO_WORKSPACE_MAX_FEED_STREAMS=${maxStreams}): close one first`,
      );
    }
    streams.set(tenant, open + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (streams.get(tenant) ?? 1) - 1;
      if (left > 0) streams.set(tenant, left);
      else streams.delete(tenant);
    };
  }

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
    // The key mark the caller's key was last read at: none yet, so the first read reads it.
    let keyRead: number | null = null;
    const leavePoll = poll.join(poke);
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
      leavePoll();
      unsubscribe();
    }
  }

  return {
    listChanges,
    follow,
    admitStream,
    /** Followers running now (streams open): a gauge, and the tests' check that they end. */
    following: () => following,
    /** Ends every follower (their streams close): the server's shutdown, before it closes its connections. */
    stop: () => stopping.abort(),
    /** Subscribers to this server's commit signal (one per follower). */
    listeners: () => signal.count(),
  };
}

export type Feed = ReturnType<typeof createFeed>;

/**
 * One poll of the storage's marks for every follower: a single timer, running while any follower
 * is joined, reads the change mark and the key mark once per `pollMs` and pokes every follower when
 * either moved (a commit by another process, a revoke), else the tenth of them whose turn it is to
 * read anyway (READ_EVERY_POLLS). An idle stream then costs nothing per poll but its turn.
 */
function sharedPoll(storage: Pick<Storage, 'changeMark' | 'keyMark'>, pollMs: number, schedule: Every) {
  const turns = Array.from({ length: READ_EVERY_POLLS }, () => new Set<() => void>());
  let joined = 0;
  let nextTurn = 0;
  let turn = 0;
  let marks: { change: number; key: number } | null = null;
  let cancel: (() => void) | null = null;
  const pokeAll = () => {
    for (const t of turns) for (const poke of t) poke();
  };
  const look = () => {
    let moved: boolean;
    try {
      const now = { change: storage.changeMark(), key: storage.keyMark() };
      moved = marks === null || now.change !== marks.change || now.key !== marks.key;
      marks = now;
    } catch {
      // A mark that cannot be read: every follower reads its page, whose failure then ends its stream.
      moved = true;
    }
    turn = (turn + 1) % READ_EVERY_POLLS;
    if (moved) pokeAll();
    else for (const poke of turns[turn]!) poke();
  };
  return {
    /** Pokes `poke` when a look finds something may have changed, or on its turn; returns the leave. */
    join(poke: () => void): () => void {
      const mine = turns[nextTurn++ % READ_EVERY_POLLS]!;
      mine.add(poke);
      joined += 1;
      if (cancel === null) {
        // Read now: a commit after this moves the mark, and one before it is in the joiner's first page.
        marks = null;
        try {
          marks = { change: storage.changeMark(), key: storage.keyMark() };
        } catch {
          // Read at the first look instead.
        }
        cancel = schedule(look, pollMs);
      }
      let left = false;
      return () => {
        if (left) return;
        left = true;
        mine.delete(poke);
        joined -= 1;
        if (joined === 0 && cancel !== null) {
          cancel();
          cancel = null;
        }
      };
    },
  };
}

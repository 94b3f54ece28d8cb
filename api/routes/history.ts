/**
 * @module The history routes (issue 15): GET /v1/memory_stores/:store/changes (JSON pages, or
 * server-sent events with `Accept: text/event-stream`) and GET …/memory_versions/:version/diff.
 */
import { Hono, type Context } from 'hono';
import { accepts } from 'hono/accepts';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { every as defaultEvery, MnemoError, parseChangesQuery, parseDiffQuery, type ChangePage, type Every, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { errorBody } from '../errors.js';
import { header, query, textHeader } from '../request.js';
import { changeEvent, toWireChange, toWireChangePage, toWireDiff } from '../wire-history.js';

/** A comment line this often keeps proxies from closing an idle stream (and tells the client it lives). */
export const HEARTBEAT_MS = 15_000;

export interface HistoryRouteOptions {
  heartbeatMs?: number;
  /** The heartbeat's timer (tests inject one to count what is running). */
  every?: Every;
}

export function historyRoutes(service: Service, { heartbeatMs = HEARTBEAT_MS, every = defaultEvery }: HistoryRouteOptions = {}) {
  const app = new Hono<AppEnv>();

  app.get('/:store/changes', async (c) => {
    const storeId = c.req.param('store');
    const events = wantsEvents(c);
    const q = parseChangesQuery(query(c), events ? textHeader(c, 'last-event-id', 'Last-Event-ID') : undefined);
    if (!events) return c.json(toWireChangePage(await service.feed.listChanges(c.var.caller, storeId, q)));
    // Refusals (no such store, no grant, another store's cursor, the workspace's streams all open)
    // answer as the usual envelope, before the stream opens; the stream's place is given back when it ends.
    const abort = new AbortController();
    const pages = await service.feed.follow(c.var.caller, storeId, q, abort.signal);
    const release = service.feed.admitStream(c.var.caller);
    return streamSSE(c, (stream) => follow(c, stream, pages, abort).finally(release));
  });

  app.get('/:store/memory_versions/:version/diff', async (c) => {
    const { against } = parseDiffQuery(query(c));
    return c.json(toWireDiff(await service.diffVersion(c.var.caller, c.req.param('store'), c.req.param('version'), against)));
  });

  /** Streams the follower's pages as they commit, until the client goes (or the store does). */
  async function follow(c: Context<AppEnv>, stream: SSEStreamingApi, pages: AsyncGenerator<ChangePage>, abort: AbortController): Promise<void> {
    stream.onAbort(() => abort.abort());
    const stopBeat = every(() => void stream.write(': heartbeat\n\n'), heartbeatMs);
    try {
      await stream.write(': mnemo change feed\n\n');
      for await (const page of pages) {
        for (const item of page.data) {
          await stream.writeSSE({ id: item.cursor, event: changeEvent(item), data: JSON.stringify(toWireChange(item)) });
        }
      }
    } catch (err) {
      // The store went away or the key lost its grant mid-stream: say why, then end.
      const mnemo = err instanceof MnemoError ? err : new MnemoError('internal', 'internal server error', {}, { cause: err });
      await stream.writeSSE({ event: 'error', data: JSON.stringify(errorBody(mnemo, c.var.requestId)) });
    } finally {
      stopBeat();
      abort.abort();
    }
  }

  return app;
}

/**
 * Whether the client asked for events rather than a page: q-values weigh (q=0 refuses), a type
 * named outright beats a wildcard, and on a tie the one listed first wins. No Accept, or a
 * wildcard alone, is a JSON page.
 */
function wantsEvents(c: Context<AppEnv>): boolean {
  return accepts(c, { header: 'Accept', supports: ['application/json', 'text/event-stream'], default: 'application/json' }) === 'text/event-stream';
}

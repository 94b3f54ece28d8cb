/**
 * @module The cross-host wake-up's ear (issue 14): one dedicated connection (a `pg.Client`, not
 * from the pool: a pooled connection given back stops listening) that LISTENs on notify.ts's
 * channel and hands every notice of another storage to `onNotice`. A notification sent while it
 * was not listening is lost, so every (re)connect first says `onResync` (treat everything as
 * changed); a dropped connection is opened again with a growing delay, for as long as it runs.
 */
import pg from 'pg';
import { CHANNEL, parseNotice, type Notice } from './notify.js';

/** The listener's `application_name` in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'mnemo-listener';

export interface ListenerOptions {
  url: string;
  /** This storage's origin: its own notices are not passed on. */
  origin: string;
  onNotice: (n: Notice) => void;
  /** Listening (again): notices may have been missed meanwhile. */
  onResync: () => void;
  log?: (line: string) => void;
  /** First and longest wait before reconnecting, in ms (doubling in between). */
  backoffMs?: { first: number; max: number };
  /** How often the idle connection is asked a `SELECT 1`, in ms: a silently dead link fails it and is replaced. */
  heartbeatMs?: number;
}

export interface Listener {
  /** Resolves once the first connection listens, or failed (it then keeps trying in the background). */
  readonly ready: Promise<void>;
  /** Whether it listens now (a gauge; tests). */
  listening(): boolean;
  stop(): Promise<void>;
}

export function startListener({ url, origin, onNotice, onResync, log = () => {}, backoffMs = { first: 100, max: 5000 }, heartbeatMs = 15_000 }: ListenerOptions): Listener {
  let client: pg.Client | null = null;
  let stopped = false;
  let live = false;
  let delay = backoffMs.first;
  let timer: NodeJS.Timeout | null = null;

  async function connect(): Promise<void> {
    // Named, so an operator sees it in pg_stat_activity (and a test can cut it). A listener only
    // waits, so a link that died without a FIN would go unnoticed: the heartbeat's query times out.
    const c = new pg.Client({ connectionString: url, application_name: LISTENER_APPLICATION_NAME, query_timeout: heartbeatMs, keepAlive: true });
    let beat: NodeJS.Timeout | null = null;
    client = c;
    // An 'error' without a listener would end the process; a broken connection also ends.
    let lost = false;
    const drop = (why: string) => {
      if (lost) return;
      lost = true;
      live = false;
      if (beat) clearInterval(beat);
      if (client === c) client = null;
      c.end().catch(() => {});
      if (stopped) return;
      log(`mnemo: the PostgreSQL change listener lost its connection (${why}); reconnecting in ${delay} ms`);
      retry();
    };
    c.on('error', (err) => drop(err.message));
    c.on('end', () => drop('closed'));
    c.on('notification', (msg) => {
      if (msg.channel !== CHANNEL) return;
      const n = parseNotice(msg.payload);
      if (n && n.origin !== origin) onNotice(n);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      drop((err as Error).message);
      return;
    }
    if (stopped || lost) return;
    beat = setInterval(() => void c.query('SELECT 1').catch((err: Error) => drop(`heartbeat: ${err.message}`)), heartbeatMs);
    beat.unref();
    live = true;
    delay = backoffMs.first;
    onResync();
  }

  function retry(): void {
    if (timer || stopped) return;
    const wait = delay;
    delay = Math.min(delay * 2, backoffMs.max);
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, wait);
    timer.unref();
  }

  const ready = connect();
  return {
    ready,
    listening: () => live,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      live = false;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

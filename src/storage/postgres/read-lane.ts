/**
 * @module One pipelined connection beside the pool that carries the point reads made on their own
 * (`lookup` in db.ts): a retrieve's store and memory, a mount's `stat` and read of a path, a key by
 * its hash. On the pool, each of them checked out a connection of its own and woke a PostgreSQL
 * backend of its own: with four requests at once, four backends were woken, each for a few
 * microseconds of work, and on a small host the wake-ups (a socket write that schedules another
 * process) cost more than the reads. On the lane they queue on one backend that is usually awake
 * already, in one write when they were asked for together, and their answers come back together.
 *
 * Only bounded reads by key ride it (one row through a unique index), so none waits long behind
 * another; searches, listings and everything in a transaction stay on the pool. The connection is
 * opened at the first read and again at the first read after it broke; until it is open, reads
 * wait for it (and fail with its own error when it cannot be opened: the database unreachable, a
 * refused login).
 */
import pg from 'pg';
import { isUnreachable } from './unavailable.js';

/** The lane's `application_name` in pg_stat_activity (a name in the database URL wins, as for the listener). */
export const READ_LANE_APPLICATION_NAME = 'mnemo-read-lane';

export class ReadLane {
  private client: pg.Client | null = null;
  private opened: Promise<pg.Client> | null = null;
  private ended = false;

  /** `onError` hears when the connection breaks (as the pool's idle connections are heard). */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly onError: (err: Error) => void,
  ) {}

  async query(config: pg.QueryConfig): Promise<pg.QueryResult> {
    const c = await this.connection();
    try {
      return await c.query(config);
    } catch (err) {
      // A connection that broke while idle (PostgreSQL restarted, a proxy cut it) is found out by
      // the read sent on it before its close is heard: a read can go again, once, on a new one.
      // Not after a timeout: the database did not answer, and waiting again would double the wait.
      if (!isUnreachable(err) || /timeout/i.test((err as Error).message)) throw err;
      if (this.client === c) this.client = null;
      return (await this.connection()).query(config);
    }
  }

  private async connection(): Promise<pg.Client> {
    if (this.ended) throw new Error('the read lane is closed');
    return this.client ?? this.opened ?? this.open();
  }

  /** Closes the connection; reads after it fail. */
  async end(): Promise<void> {
    this.ended = true;
    const c = this.client ?? (await this.opened?.catch(() => null));
    this.client = null;
    await c?.end().catch(() => {});
  }

  private open(): Promise<pg.Client> {
    const c = new pg.Client({ ...this.config, application_name: READ_LANE_APPLICATION_NAME, pipeline: true });
    const drop = () => {
      if (this.client === c) this.client = null;
    };
    // Heard, never fatal: what was in flight fails on its own, and the next read opens a new one.
    c.on('error', (err) => {
      drop();
      this.onError(err);
    });
    c.on('end', drop);
    const opened = c.connect().then(
      () => {
        this.opened = null;
        if (this.ended) {
          void c.end().catch(() => {});
          throw new Error('the read lane is closed');
        }
        this.client = c;
        return c;
      },
      (err: unknown) => {
        this.opened = null;
        throw err;
      },
    );
    this.opened = opened;
    return opened;
  }
}

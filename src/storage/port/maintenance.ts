/**
 * @module The maintenance role: the upkeep a server runs on a timer (expiry sweeps, search
 * indexing), the checks of `mnemo check`, and closing. The checks grow with the store: they return
 * promises, and the SQLite adapter runs them on a reader thread (sqlite/readers.ts).
 */

export interface MaintenanceStorage {
  /** Deletes memories that expired at or before `now` (as the next write would), at most `max` in one transaction; returns how many. */
  purgeExpiredMemories(now: string, max?: number): Promise<number>;
  /** Indexes up to `max` memories written since their last indexing, in one transaction; returns how many still wait (SQLite counts up to 10,000 of them). */
  indexSearchBacklog(max: number): Promise<number>;
  /**
   * One short step of removing deleted stores' rows; returns whether another should follow at once
   * (SQLite also answers false while its WAL's checkpoints are behind: a later call goes on). SQLite hides a
   * deleted store at once and removes its rows here, in slices (sqlite/store-purge.ts), since one
   * transaction of a big store's rows would hold the serving thread for seconds; PostgreSQL deletes
   * them in the request's own transaction, on the database server, and has none.
   */
  purgeDeletedStores(): Promise<boolean>;
  /**
   * Housekeeping of what a burst of writes left, once the upkeep has nothing else to do: PostgreSQL
   * vacuums the tables holding many dead row versions rather than waiting up to a minute for
   * autovacuum (postgres/vacuum.ts); returns the tables it tidied. Absent: nothing to do (SQLite).
   */
  tidy?(): Promise<readonly string[]>;
  /**
   * One bounded step of erasing, from the search index, the words of texts it took out without
   * erasing them, once a redaction or prune in their store made that due; returns whether steps
   * remain. The service runs it to the end after each such redaction or prune, a turn of the event
   * loop apart, and the search upkeep finishes what a crash interrupted (`indexSearchBacklog` runs
   * these steps before indexing again). SQLite only (sqlite/schema/search-remnants.ts): PostgreSQL
   * keeps no such index.
   */
  eraseSearchRemnants?(): Promise<boolean>;
  /**
   * How much waits for `indexSearchBacklog` now: queued memories (and, on PostgreSQL, new texts not
   * yet in the trigram index), the sum its last batch would return. Counted (it grows with the
   * queue): SQLite answers on a reader thread, so it sees committed writes only.
   */
  searchBacklog(): Promise<number>;
  /**
   * Whether the engine keeps a search backlog at all: true on both adapters (writes queue for
   * `indexSearchBacklog`; PostgreSQL since its migration 10). A constant of the adapter, asked
   * synchronously; the conformance suite reads it instead of asking which engine it runs on.
   */
  keepsSearchBacklog(): boolean;
  /** The engine's own integrity check, each problem prefixed with the engine's name (`sqlite: `); an empty list means clean. */
  integrityCheck(): Promise<string[]>;
  /** The domain's invariants (sqlite/schema/migrations.ts 2, 3, 9 and valid stored paths); an empty list means clean. */
  domainCheck(): Promise<string[]>;
  close(): Promise<void>;
}

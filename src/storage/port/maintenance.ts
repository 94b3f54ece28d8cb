/**
 * @module The maintenance role: the upkeep a server runs on a timer (expiry sweeps, search
 * indexing), the checks of `mnemo check`, and closing.
 */

export interface MaintenanceStorage {
  /** Deletes every memory that expired at or before `now` (as the next write would); returns how many. */
  purgeExpiredMemories(now: string): number;
  /** Indexes up to `max` memories written since their last indexing, in one transaction; returns how many still wait. */
  indexSearchBacklog(max: number): number;
  /** The engine's own integrity check; an empty list means clean. */
  integrityCheck(): string[];
  /** The domain's invariants (schema.ts 2, 3, 9 and valid stored paths); an empty list means clean. */
  domainCheck(): string[];
  close(): void;
}

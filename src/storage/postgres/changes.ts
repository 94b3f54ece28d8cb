/**
 * @module The change marks on PostgreSQL: counters this process's committed writes move, and the
 * cross-host wake-up (listener.ts) moves for other servers' commits. A notice that names its store
 * moves only that store's mark (and the total), so a busy store on one host does not drop every
 * other store's mount caches on the others; a notice without a store (a mode change, a redaction,
 * a listener that reconnected) moves every mark.
 */
export interface ChangeMarks {
  changeMark(): number;
  /** The mark of one store: moves with this process's writes, notices for it and notices for any store. */
  storeChangeMark(storeId: string): number;
  ownWriteMark(): number;
  /** This process's commits: each of its transactions (a write outside one is one) counts once, so it is ownWriteMark() here. */
  ownWriteCount(): number;
  /** A commit of this process (called once the transaction committed). */
  ownCommit(): void;
  /** Another process committed, in `storeId` (undefined or null: in any store). */
  outsideChange(storeId?: string | null): void;
  /** Calls `fn` whenever a mark moves; returns the unsubscribe. */
  onMarkMoved(fn: () => void): () => void;
}

export function createChangeMarks(): ChangeMarks {
  let own = 0;
  /** Notices for any store. */
  let everywhere = 0;
  /** Every notice, of either kind: changeMark() moves for each. */
  let outside = 0;
  const byStore = new Map<string, number>();
  const listeners = new Set<() => void>();
  const moved = (): void => {
    for (const fn of listeners) fn();
  };
  return {
    // Every count only grows, so a sum moves whenever one of its parts does.
    changeMark: () => own + outside,
    storeChangeMark: (storeId) => own + everywhere + (byStore.get(storeId) ?? 0),
    ownWriteMark: () => own,
    ownWriteCount: () => own,
    ownCommit: () => {
      own += 1;
      moved();
    },
    outsideChange: (storeId) => {
      outside += 1;
      if (storeId == null) everywhere += 1;
      else byStore.set(storeId, (byStore.get(storeId) ?? 0) + 1);
      moved();
    },
    onMarkMoved(fn) {
      const own = (): void => fn();
      listeners.add(own);
      return () => listeners.delete(own);
    },
  };
}

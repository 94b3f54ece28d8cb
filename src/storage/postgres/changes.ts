/**
 * @module The change marks on PostgreSQL: for now a counter this process's committed writes move.
 * Another server's commits do not move it yet: the cross-host wake-up (LISTEN/NOTIFY on a dedicated
 * connection, a per-store change sequence as the truth, issue 14 item 3) calls `outsideChange()`
 * when it hears one, and changeMark() then moves for every reader as the port promises.
 */
export interface ChangeMarks {
  changeMark(): number;
  ownWriteMark(): number;
  /** A commit of this process (called once the transaction committed). */
  ownCommit(): void;
  /** HOOK: another process committed (the NOTIFY listener calls it; nothing does yet). */
  outsideChange(): void;
}

export function createChangeMarks(): ChangeMarks {
  let own = 0;
  let outside = 0;
  return {
    // Both counts only grow, so their sum moves whenever either does.
    changeMark: () => own + outside,
    ownWriteMark: () => own,
    ownCommit: () => {
      own += 1;
    },
    outsideChange: () => {
      outside += 1;
    },
  };
}

/** @module Which node serves a session when many servers share one database (issue 14). */
import type { Session } from './types.js';

/** Whether this node serves the session: its own, or one from before node ids (or any, when the process has no node id). */
export function ownSession(s: Session, nodeId: string | null): boolean {
  return nodeId === null || s.nodeId == null || s.nodeId === nodeId;
}

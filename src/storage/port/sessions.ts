/** @module The sessions role: mount sessions, active until ended once. */
import type { Page, Session, SessionResource } from '../../domain/types.js';

export interface SessionStorage {
  insertSession(session: Session): Promise<void>;
  getSession(workspaceId: string, id: string): Promise<Session | null>;
  listSessions(workspaceId: string, limit: number, page: string | null): Promise<Page<Session>>;
  /** Active sessions the server mounts: not those of a `mnemo mount` process (localPid). */
  listActiveSessions(): Promise<Session[]>;
  /** Active sessions created by this API key (any workspace: an operator key acts in several), oldest first: its revoke ends them. */
  listActiveSessionsOfKey(apiKeyId: string): Promise<Session[]>;
  /** Active sessions of `mnemo mount` processes, to end those whose process is gone. */
  listActiveLocalSessions(): Promise<Session[]>;
  /**
   * Records where an active session's stores are mounted now (their host paths, and the node that
   * mounts them); an ended session is left as it is.
   */
  moveSession(workspaceId: string, id: string, resources: SessionResource[], nodeId: string | null): Promise<void>;
  /** Sets ended_at once; ending an ended session returns it unchanged. */
  endSession(workspaceId: string, id: string, now: string): Promise<Session>;
  /** Active sessions of a workspace, counted from an index of active sessions only. */
  countActiveSessions(workspaceId: string): Promise<number>;
  /** The stores the active sessions of a workspace mount, all together (each resource of each session). */
  countActiveMounts(workspaceId: string): Promise<number>;
}

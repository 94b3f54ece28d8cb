/** @module The Mounter port: the core asks for mounts, fs/ implements them, main.ts injects it. */
import type { Actor } from './types.js';

export interface MountRequest {
  storeId: string;
  /** Absolute host directory to mount at (created if missing). */
  hostPath: string;
  readOnly: boolean;
  /** Who the mount's writes are attributed to (a session_actor for sessions). */
  actor: Actor;
}

export interface Mounter {
  mount(req: MountRequest): Promise<void>;
  /** Unmounts one mount point; unmounting a path that is not mounted is not an error. */
  unmount(hostPath: string): Promise<void>;
  /** Turns every mount of a store read-only (the store was archived) or tells them it is gone. */
  storeChanged(storeId: string, change: 'archived' | 'deleted'): void;
  /** Clears mounts left behind by a crash under a root directory (dead ones: a live one is another process's). */
  clearStale(root: string): Promise<void>;
  /**
   * Clears a dead mount at exactly `hostPath` (its process is gone: ENOTCONN), as a `mnemo mount`
   * killed -9 can leave when auto_unmount loses a race; a live mount there is left alone.
   */
  clearDead?(hostPath: string): Promise<void>;
  unmountAll(): Promise<void>;
  /** The host paths this mounter serves that the kernel shows as mounted now (readiness, metrics). */
  mounted?(): Promise<readonly string[]>;
}

/**
 * @module Caps on mount-local state: the bytes a mount holds in memory that are not a stored
 * version. What counts is the size of every working copy that is not simply a copy of its stored
 * version: files under `.git/`, scratch drafts (temp-looking files kept until a rename), new files
 * not saved yet, and open files with unsaved changes. A clean working copy
 * of a stored file does not count (it is a copy of a version, shared with the content cache, and
 * each is at most 102,400 bytes).
 *
 * One budget per mount (MNEMO_MOUNT_LOCAL_MAX_BYTES), one per workspace (half of
 * MNEMO_LOCAL_MAX_BYTES: the workspace's mounts together, so one tenant's mounts always leave the
 * other half of the process's budget to the others) and one for the whole process
 * (MNEMO_LOCAL_MAX_BYTES). A write or truncate that would grow the counted bytes past any of them fails
 * with ENOSPC, and the file's changes are dropped when it is closed (nothing is half-kept, as with
 * EFBIG). Saving, deleting or truncating a file, and the end of the mount, give the bytes back.
 *
 * Each draft records what it is charged (`Draft.charged`); `settleLocal` recharges it from its
 * current state after anything that may change it, so the totals are sums of those records.
 */
import Fuse from './binding/fuse.js';
import type { MountContext } from './context.js';
import { fsError } from './errno.js';
import type { Draft } from './handles.js';

/** Bytes counted against one cap, and the cap. */
export class LocalBudget {
  used = 0;
  constructor(
    readonly max: number,
    /** The setting that sets `max`, named in refusals. */
    readonly setting: string,
    /** Whose bytes these are, in refusals. */
    readonly whose = 'mount-local files',
    /** The cap as refusals name it. */
    readonly limit = `${setting}=${max}`,
  ) {}
}

/** The part of MNEMO_LOCAL_MAX_BYTES one workspace's mounts may hold together. */
export const WORKSPACE_SHARE = 1 / 2;

/** The budget of one workspace's mounts: WORKSPACE_SHARE of the process's (at least a byte). */
export function workspaceBudget(workspaceId: string, server: LocalBudget): LocalBudget {
  return new LocalBudget(
    Math.max(1, Math.floor(server.max * WORKSPACE_SHARE)),
    server.setting,
    `mount-local files of workspace ${workspaceId}`,
    `its share, half of ${server.setting}=${server.max}`,
  );
}

export interface LocalLimits {
  mountMaxBytes: number;
  serverMaxBytes: number;
}

export const DEFAULT_LOCAL_LIMITS: Readonly<LocalLimits> = Object.freeze({
  mountMaxBytes: 64 * 1024 * 1024,
  serverMaxBytes: 512 * 1024 * 1024,
});

/** What a draft in its current state holds of mount-local state. */
function chargeOf(d: Draft): number {
  const held = d.path !== null || d.opens > 0;
  return held && (d.scratch || d.dirty || !d.stored) ? d.size : 0;
}

/**
 * Refuses (ENOSPC) a change that leaves the draft `size` bytes long and counted (any write or
 * resize leaves it changed), if that grows the mount's or the server's local bytes past its cap.
 * Marks the draft failed, so the file's changes are dropped at its last close.
 */
export function reserveLocal(ctx: MountContext, d: Draft, size: number): void {
  const grow = size - d.charged;
  if (grow <= 0) return;
  for (const b of [ctx.local, ctx.workspaceLocal, ctx.serverLocal]) {
    if (b.used + grow > b.max) {
      d.failed = Fuse.ENOSPC;
      throw fsError(Fuse.ENOSPC, `${b.whose} would hold ${b.used + grow} bytes, over ${b.limit}`);
    }
  }
}

/** Recharges a draft from its state (never refuses: shrinking, saving and forgetting only give back). */
export function settleLocal(ctx: MountContext, d: Draft): void {
  const next = chargeOf(d);
  const delta = next - d.charged;
  if (delta === 0) return;
  d.charged = next;
  ctx.local.used += delta;
  ctx.workspaceLocal.used += delta;
  ctx.serverLocal.used += delta;
}

/** The mount ended: everything it held is given back to its workspace's budget and the server's. */
export function releaseAllLocal(ctx: MountContext): void {
  for (const d of ctx.drafts.values()) d.charged = 0;
  for (const h of ctx.handles.all()) h.draft.charged = 0;
  ctx.serverLocal.used -= ctx.local.used;
  ctx.workspaceLocal.used -= ctx.local.used;
  ctx.local.used = 0;
}

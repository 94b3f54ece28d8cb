/**
 * @module Drafts that leave their path because their changes will be dropped (a refused save, a
 * write over a cap), and what the kernel must forget with them: a new file's entry for its name, a
 * stored file's cached size and pages (those of the dropped changes).
 */
import type { MountContext } from './context.js';
import type { Draft } from './handles.js';
import { settleLocal } from './local-budget.js';
import { giveBack } from './set-aside.js';

/**
 * A refused save: the draft's changes are dropped on its last release, and it leaves its path now,
 * so a new writer starts from what is stored instead of inheriting the refusal.
 */
export function dropFailed(ctx: MountContext, d: Draft, errno: number): void {
  d.failed = errno;
  giveBack(ctx, d);
  leavePath(ctx, d);
}

/** Drafts that left their path, until the kernel has dropped what it cached of their changes. */
const forgetting = new WeakMap<Draft, Promise<void>>();

/**
 * A failed draft leaves its path: the next open, stat or listing sees the stored file, or none. The
 * kernel saw no unlink: a new file's entry for the name is dropped too, or for up to the entry
 * timeout a path below the name would be answered ENOTDIR from its cache (an open of it is answered
 * ESTALE, so a create still works: ops.ts goneSinceLookup). A stored file's size and pages in the
 * kernel may be the dropped changes' (an ftruncate): they are dropped, and the next open refreshes.
 */
export function leavePath(ctx: MountContext, d: Draft): void {
  const path = d.path;
  const here = path !== null && ctx.drafts.get(path) === d;
  ctx.drafts.detach(d);
  settleLocal(ctx, d);
  const kernel = ctx.kernel;
  if (!here) return;
  if (d.stored) ctx.served.set(path, '');
  if (!kernel) return;
  forgetting.set(d, new Promise<void>((done) => (d.stored ? kernel.invalidate(path, done) : kernel.invalidateEntry(path, ctx.dirs.parentIno(path), done))));
}

/**
 * A saved draft's stored times differ from those the kernel holds (a chmod's or utimens's reply
 * after the last write): its attributes of `path` (and pages) are dropped, so the next stat asks.
 * The close that saved waits for it as a refused one does (kernelCaughtUp), so a stat right after
 * it sees the stored times.
 */
export function forgetAttrs(ctx: MountContext, d: Draft, path: string): void {
  const kernel = ctx.kernel;
  if (!kernel) return;
  forgetting.set(d, new Promise<void>((done) => kernel.invalidate(path, () => done())));
}

/**
 * Waits (at most `ms`) until the kernel has forgotten what it cached of `d`'s dropped changes, so a
 * refused close() returns with the kernel's view already the stored one. Bounded: the kernel takes
 * the directory's lock to drop an entry, and a rename holding it may be waiting on libfuse's lock
 * of the path that the close is still using.
 */
export function kernelCaughtUp(d: Draft | undefined, ms = 50): Promise<void> | undefined {
  const pending = d && forgetting.get(d);
  if (!pending) return undefined;
  return new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    void pending.then(() => {
      clearTimeout(timer);
      done();
    });
  });
}

/** @module The mount's working copies by path: a Map that also keeps each draft's own `path` in step with its key. */
import type { Draft } from './handles.js';

export class Drafts extends Map<string, Draft> {
  /** The draft at `src` now lives at `dst` (rename, or the undo of a failed one); a draft at `dst` is replaced. */
  move(src: string, dst: string): void {
    const d = this.get(src);
    if (!d) return;
    this.delete(src);
    d.path = dst;
    this.set(dst, d);
  }

  /** `d` leaves its path (deleted, replaced, or no longer needed); its open handles keep their bytes. */
  detach(d: Draft): void {
    if (d.path !== null && this.get(d.path) === d) this.delete(d.path);
    d.path = null;
  }
}

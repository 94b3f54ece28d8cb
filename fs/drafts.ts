/**
 * @module The mount's working copies by path: a Map that also keeps each draft's own `path` in step
 * with its key, and tells `onChange` of each path that gains or loses one (a path with a working
 * copy has its stat answered by the handler, never by the binding's kept stats: kernel-stats.ts).
 */
import type { Draft } from './handles.js';

export class Drafts extends Map<string, Draft> {
  private onChange: (path: string) => void = () => {};

  /** Calls `fn` after each set or delete of a path. */
  watch(fn: (path: string) => void): this {
    this.onChange = fn;
    return this;
  }

  override set(path: string, d: Draft): this {
    super.set(path, d);
    this.onChange(path);
    return this;
  }

  override delete(path: string): boolean {
    const had = super.delete(path);
    if (had) this.onChange(path);
    return had;
  }

  override clear(): void {
    const paths = [...this.keys()];
    super.clear();
    for (const p of paths) this.onChange(p);
  }

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

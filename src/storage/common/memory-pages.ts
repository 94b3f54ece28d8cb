/**
 * @module The pages of a memory listing, for both adapters (sqlite/memories.ts,
 * postgres/memories.ts): where a cursor resumes, and the page built from the rows or the tree
 * walk's children the adapter read.
 */
import type { MemoryListItem, MemoryListQuery, Page } from '../../domain/types.js';
import { cursorNumber, cursorString, decodeCursor, encodeCursor } from '../cursor.js';
import { toMemory, toMemoryMeta, type MemoryRow } from './rows.js';
import type { Child } from './tree.js';

/** A memory as a listing shows it: whole, or its metadata only. */
export function memoryItem(r: MemoryRow, view: MemoryListQuery['view']): MemoryListItem {
  return { type: 'memory', memory: view === 'full' ? toMemory(r) : toMemoryMeta(r) };
}

/** Where a flat listing (depth 0) resumes: after the cursor's path, never before the prefix. */
export function rangeAfter(lq: MemoryListQuery): string {
  const c = decodeCursor(lq.page);
  // A cursor taken from another query must not lead the range out of the prefix.
  const k = c ? cursorString(c, 'k') : null;
  return k !== null && k > lq.pathPrefix ? k : lq.pathPrefix;
}

/** A flat listing's page from up to `limit + 1` rows in path order (the one past the page says there is more). */
export function rangePage(rows: MemoryRow[], lq: MemoryListQuery): Page<MemoryListItem> {
  const page = rows.slice(0, lq.limit);
  const data = page.map((r) => memoryItem(r, lq.view));
  return { data, nextPage: rows.length > lq.limit ? encodeCursor({ k: page[page.length - 1]!.path }) : null };
}

/** Where a listing of direct children (depth 1) resumes its walk of the tree. */
export function walkStart(lq: MemoryListQuery): { key: string; inclusive: boolean } {
  const c = decodeCursor(lq.page);
  const resumeAt = c ? { key: cursorString(c, 'k'), inclusive: cursorNumber(c, 'x') === 1 } : null;
  return resumeAt && resumeAt.key > lq.pathPrefix ? resumeAt : { key: lq.pathPrefix, inclusive: false };
}

/** A depth-1 listing's page, filled from the tree walk's children one at a time. */
export class ChildPage {
  private readonly data: MemoryListItem[] = [];
  private resume: Child['resume'] | null = null;
  private more = false;

  constructor(private readonly limit: number) {}

  /** False once the page is full: the caller stops walking, and the child it holds says there is more. */
  wants(): boolean {
    if (this.data.length < this.limit) return true;
    this.more = true;
    return false;
  }

  /** Adds a child's item (null: the child is passed over) and resumes after it. */
  add(item: MemoryListItem | null, resume: Child['resume']): void {
    if (item) this.data.push(item);
    this.resume = resume;
  }

  result(): Page<MemoryListItem> {
    return { data: this.data, nextPage: this.more && this.resume ? encodeCursor(this.resume) : null };
  }
}

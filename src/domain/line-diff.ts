/**
 * @module Line diffs at a bounded cost (DESIGN §3). The `diff` package's Myers diff costs O(N·D)
 * and more (D², allocating): two 15,000-line texts that differ on every line held the event loop
 * for 80 s. It searches for at most MAX_EDITS changed lines, and for at most DIFF_BUDGET_MS (for
 * texts long enough that even that search could take long); past either, the texts' common first
 * and last lines are kept and the lines between are replaced whole: still a correct diff (it
 * applies), not the smallest one (`minimal: false`). The edit bound makes the answer the same
 * on every run; the time bound only catches long texts with many near-matches.
 * Lines are split here (the package's own line splitter cost as much as the budget on 100 KiB of
 * short lines), and hunks are made as the package's structuredPatch makes them, so a minimal
 * diff reads exactly as before.
 */
import { diffArrays, type StructuredPatchHunk } from 'diff';

/** The most removed plus added lines the search looks for: about 10 ms of the search at worst. */
export const MAX_EDITS = 200;

/** Event-loop time the search may take per diff; the rest of a diff is linear in its size. */
export const DIFF_BUDGET_MS = 20;

/** Consecutive lines that both texts share, or that one removes or adds. Each line keeps its `\n`. */
export interface LineRun {
  kind: 'same' | 'removed' | 'added';
  lines: string[];
}

export interface LineDiff {
  runs: LineRun[];
  /** false: the search ran out of its budget and the differing middle is replaced whole. */
  minimal: boolean;
}

export function diffTextLines(from: string, to: string, { maxEdits = MAX_EDITS, budgetMs = DIFF_BUDGET_MS } = {}): LineDiff {
  const a = splitLines(from);
  const b = splitLines(to);
  // Texts this short cannot need more edits than the bound, nor take long: no clock, so a pause
  // of the process (a GC) never turns their diff into a replacement.
  const short = a.length + b.length <= maxEdits;
  const changes = short ? diffArrays(a, b) : diffArrays(a, b, { maxEditLength: maxEdits, timeout: budgetMs });
  if (changes) return { runs: changes.map((c) => ({ kind: c.added ? 'added' : c.removed ? 'removed' : 'same', lines: c.value })), minimal: true };
  return { runs: replaceMiddle(a, b), minimal: false };
}

/**
 * Unified-diff hunks with `context` lines around each change, merged when at most twice that many
 * lines separate two changes; a last line without `\n` is marked "\ No newline at end of file".
 * The same hunks as the package's structuredPatch for the same runs.
 */
export function toHunks(runs: readonly LineRun[], context: number): StructuredPatchHunk[] {
  const hunks: StructuredPatchHunk[] = [];
  let oldStart = 0;
  let newStart = 0;
  let lines: string[] = [];
  let oldLine = 1;
  let newLine = 1;
  // Each line's `\n` is dropped; one without (a text's last) is followed by the package's marker.
  const push = (prefix: string, from: readonly string[]) => {
    for (const l of from) {
      if (l.endsWith('\n')) lines.push(prefix + l.slice(0, -1));
      else lines.push(prefix + l, '\\ No newline at end of file');
    }
  };
  const close = (trailing: number) => {
    hunks.push({ oldStart, oldLines: oldLine - oldStart + trailing, newStart, newLines: newLine - newStart + trailing, lines });
    oldStart = newStart = 0;
    lines = [];
  };
  runs.forEach((run, i) => {
    const n = run.lines.length;
    if (run.kind !== 'same') {
      if (!oldStart) {
        const before = i > 0 && context > 0 ? runs[i - 1]!.lines.slice(-context) : [];
        oldStart = oldLine - before.length;
        newStart = newLine - before.length;
        push(' ', before);
      }
      push(run.kind === 'added' ? '+' : '-', run.lines);
      if (run.kind === 'added') newLine += n;
      else oldLine += n;
      return;
    }
    if (oldStart) {
      if (n <= context * 2 && i < runs.length - 1) push(' ', run.lines);
      else {
        const trailing = Math.min(n, context);
        push(' ', run.lines.slice(0, trailing));
        close(trailing);
      }
    }
    oldLine += n;
    newLine += n;
  });
  if (oldStart) close(0);
  return hunks;
}

/** Lines with their `\n` (the last one may have none), as the package's line diff splits them. */
function splitLines(text: string): string[] {
  const parts = text.split('\n');
  const last = parts.pop()!;
  const lines = parts.map((l) => `${l}\n`);
  if (last !== '') lines.push(last);
  return lines;
}

/** The common first and last lines kept; every line between removed, then every line between added. */
function replaceMiddle(a: string[], b: string[]): LineRun[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const runs: LineRun[] = [
    { kind: 'same', lines: a.slice(0, head) },
    { kind: 'removed', lines: a.slice(head, a.length - tail) },
    { kind: 'added', lines: b.slice(head, b.length - tail) },
    { kind: 'same', lines: a.slice(a.length - tail) },
  ];
  return runs.filter((r) => r.lines.length > 0);
}

/**
 * @module The work of a diff (src/service/diffs.ts), as data in and data out, so that it can run on
 * the diff thread (diff-thread.ts) or, where no thread can start, inline: the line search, the hunks
 * and the patch text all grow with the two texts (two 100 KiB versions of short lines took 140–290 ms),
 * which DESIGN §3 keeps off the thread that serves every mount and request.
 */
import { FILE_HEADERS_ONLY, formatPatch } from 'diff';
import { DIFF_BUDGET_MS, diffTextLines, toHunks, type LineDiff } from '../domain/line-diff.js';

/** A unified diff of two texts, with the names and headers of its `---`/`+++` lines. */
export interface PatchJob {
  kind: 'patch';
  from: string;
  to: string;
  fromName: string;
  toName: string;
  fromHeader: string;
  toHeader: string;
  context: number;
}

/** The line runs of two texts, for a caller that lays them out itself (the console's diff views). */
export interface RunsJob {
  kind: 'runs';
  from: string;
  to: string;
}

export type DiffJob = PatchJob | RunsJob;

export interface PatchResult {
  unified: string;
  minimal: boolean;
}

export type DiffResult<J extends DiffJob> = J extends PatchJob ? PatchResult : LineDiff;

/**
 * `budgetMs`: how long the line search may take (domain/line-diff.ts). Inline, on the serving thread,
 * the domain's 20 ms; the diff thread passes its own, longer one (diff-worker.ts).
 */
export function runDiffJob<J extends DiffJob>(job: J, budgetMs?: number): DiffResult<J>;
export function runDiffJob(job: DiffJob, budgetMs = DIFF_BUDGET_MS): PatchResult | LineDiff {
  const diff = diffTextLines(job.from, job.to, { budgetMs });
  if (job.kind === 'runs') return diff;
  const unified = formatPatch(
    { oldFileName: job.fromName, newFileName: job.toName, oldHeader: job.fromHeader, newHeader: job.toHeader, hunks: toHunks(diff.runs, job.context) },
    FILE_HEADERS_ONLY,
  );
  return { unified, minimal: diff.minimal };
}

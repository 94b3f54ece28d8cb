/**
 * @module Two versions' content compared (the service's bounded line diff, src/domain/line-diff.ts):
 * unified hunks, or side by side rows. Past the diff's budget the differing middle is shown replaced
 * whole, and the page says so.
 */
import { toHunks, type LineDiff, type LineRun } from '../../src/index.js';

export type DiffLayout = 'unified' | 'split';

interface Sides {
  runs: LineRun[];
  fromLabel: string;
  toLabel: string;
}

/** `diff`: the service's line runs of the two texts (service.lineDiff, on the diff thread); null when they are equal. */
export function Diff({ diff, layout, fromLabel, toLabel }: { diff: LineDiff | null; layout: DiffLayout; fromLabel: string; toLabel: string }) {
  if (diff === null) return <p>The two versions hold the same content.</p>;
  const { runs, minimal } = diff;
  return (
    <>
      {minimal ? null : (
        <p class="muted" role="note">
          These versions differ in too many places to find their smallest diff quickly: every line between their common first and last lines is shown removed, then added.
        </p>
      )}
      {layout === 'split' ? <Split runs={runs} fromLabel={fromLabel} toLabel={toLabel} /> : <Unified runs={runs} fromLabel={fromLabel} toLabel={toLabel} />}
    </>
  );
}

function Unified({ runs, fromLabel, toLabel }: Sides) {
  const hunks = toHunks(runs, 3);
  return (
    <pre class="diff" aria-label={`Unified diff from ${fromLabel} to ${toLabel}`}>
      <span class="hunk">{`--- ${fromLabel}\n+++ ${toLabel}\n`}</span>
      {hunks.map((h) => (
        <>
          <span class="hunk">{`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@\n`}</span>
          {h.lines.map((line) => <span class={line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'same'}>{`${line}\n`}</span>)}
        </>
      ))}
    </pre>
  );
}

interface Row {
  left: string | null;
  right: string | null;
  kind: 'same' | 'change';
}

/** Removed lines face the added lines that replace them; unchanged lines face themselves. */
function rows(runs: LineRun[]): Row[] {
  const out: Row[] = [];
  let removed: string[] = [];
  const flush = (added: string[]) => {
    const n = Math.max(removed.length, added.length);
    for (let i = 0; i < n; i++) out.push({ left: removed[i] ?? null, right: added[i] ?? null, kind: 'change' });
    removed = [];
  };
  for (const run of runs) {
    const lines = run.lines.map((l) => l.replace(/\n$/, ''));
    if (run.kind === 'removed') removed = removed.concat(lines);
    else if (run.kind === 'added') flush(lines);
    else {
      flush([]);
      for (const l of lines) out.push({ left: l, right: l, kind: 'same' });
    }
  }
  flush([]);
  return out;
}

function Split({ runs, fromLabel, toLabel }: Sides) {
  return (
    <table class="split">
      <thead><tr><th scope="col">{fromLabel}</th><th scope="col">{toLabel}</th></tr></thead>
      <tbody>
        {rows(runs).map((r) => (
          // data-side names each cell when a narrow screen stacks them (console.css); an unchanged line shows once there.
          <tr class={r.kind}>
            <td class={r.kind === 'change' && r.left !== null ? 'del' : ''} data-side={r.kind === 'same' ? 'both' : 'old'}>{r.left ?? ''}</td>
            <td class={r.kind === 'change' && r.right !== null ? 'add' : ''} data-side="new">{r.right ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

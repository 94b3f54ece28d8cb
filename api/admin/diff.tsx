/** @module Two versions' content compared with the `diff` package: unified hunks, or side by side rows. */
import { diffLines, structuredPatch } from 'diff';

export type DiffLayout = 'unified' | 'split';

export function Diff({ from, to, layout, fromLabel, toLabel }: { from: string; to: string; layout: DiffLayout; fromLabel: string; toLabel: string }) {
  if (from === to) return <p>The two versions hold the same content.</p>;
  return layout === 'split' ? <Split from={from} to={to} fromLabel={fromLabel} toLabel={toLabel} /> : <Unified from={from} to={to} fromLabel={fromLabel} toLabel={toLabel} />;
}

function Unified({ from, to, fromLabel, toLabel }: { from: string; to: string; fromLabel: string; toLabel: string }) {
  const patch = structuredPatch(fromLabel, toLabel, from, to, '', '', { context: 3 });
  return (
    <pre class="diff" aria-label={`Unified diff from ${fromLabel} to ${toLabel}`}>
      <span class="hunk">{`--- ${fromLabel}\n+++ ${toLabel}\n`}</span>
      {patch.hunks.map((h) => (
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
function rows(from: string, to: string): Row[] {
  const out: Row[] = [];
  let removed: string[] = [];
  const flush = (added: string[]) => {
    const n = Math.max(removed.length, added.length);
    for (let i = 0; i < n; i++) out.push({ left: removed[i] ?? null, right: added[i] ?? null, kind: 'change' });
    removed = [];
  };
  for (const part of diffLines(from, to)) {
    const lines = part.value.replace(/\n$/, '').split('\n');
    if (part.removed) removed.push(...lines);
    else if (part.added) flush(lines);
    else {
      flush([]);
      for (const l of lines) out.push({ left: l, right: l, kind: 'same' });
    }
  }
  flush([]);
  return out;
}

function Split({ from, to, fromLabel, toLabel }: { from: string; to: string; fromLabel: string; toLabel: string }) {
  return (
    <table class="split">
      <thead><tr><th scope="col">{fromLabel}</th><th scope="col">{toLabel}</th></tr></thead>
      <tbody>
        {rows(from, to).map((r) => (
          <tr>
            <td class={r.kind === 'change' && r.left !== null ? 'del' : ''}>{r.left ?? ''}</td>
            <td class={r.kind === 'change' && r.right !== null ? 'add' : ''}>{r.right ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

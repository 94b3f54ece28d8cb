/** @module The console's one stylesheet: plain, high contrast (text ≥ 7:1 on its background), one column when narrow. */
export const CONSOLE_CSS = `
:root { --fg: #111; --muted: #444; --bg: #fff; --line: #bbb; --accent: #0b4f9c; --danger: #a00000; --ok: #0a5c1f; --soft: #f2f4f7; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a.skip { position: absolute; left: .5rem; top: -10rem; z-index: 10; padding: .5rem .8rem; background: #fff; color: var(--accent); border: 2px solid var(--accent); border-radius: 4px; }
a.skip:focus { top: .5rem; }
main:focus { outline: none; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .6rem 1rem; background: #10233f; color: #fff; }
header.top a, header.top button.link { color: #fff; }
header.top .brand { font-weight: 700; text-decoration: none; }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current] { font-weight: 600; text-decoration: underline; text-underline-offset: .25em; }
header.top .who { margin-left: auto; display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
a { color: var(--accent); }
a:focus-visible, a.skip:focus, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible, textarea:focus-visible { outline: 3px solid #f5a700; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: break-word; }
td code { word-break: break-all; }
label.check { white-space: nowrap; }
th { background: var(--soft); }
.muted, time .abs { color: var(--muted); font-size: .9em; }
form.inline { display: inline; }
form.stack { display: grid; grid-template-columns: minmax(0, 1fr); gap: .5rem; max-width: 32rem; }
form.row { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; }
label { display: grid; grid-template-columns: minmax(0, 1fr); gap: .15rem; font-weight: 600; }
label.check { display: flex; gap: .4rem; align-items: center; font-weight: 400; }
label .hint { color: var(--muted); font-size: .9em; font-weight: 400; }
input, select, textarea, button { font: inherit; font-weight: 400; }
input, select, textarea { max-width: 100%; padding: .35rem .5rem; border: 1px solid #666; border-radius: 4px; background: #fff; color: var(--fg); }
button, .button { padding: .35rem .8rem; border: 1px solid var(--accent); border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; padding: 0; color: var(--accent); text-decoration: underline; }
form.edit { display: grid; grid-template-columns: minmax(0, 1fr); gap: .5rem; }
textarea.content { width: 100%; font: 14px/1.4 ui-monospace, Menlo, Consolas, monospace; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
.actions p { margin: 0; }
pre.content, pre.diff, pre.secret { font: 14px/1.4 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); border: 1px solid var(--line); padding: .75rem; margin: .5rem 0; }
.alert { border: 2px solid var(--danger); color: var(--danger); background: #fff4f4; padding: .6rem .8rem; border-radius: 4px; }
.notice { border: 2px solid var(--ok); color: var(--ok); background: #f2fbf4; padding: .6rem .8rem; border-radius: 4px; }
.badge { display: inline-block; padding: 0 .4rem; border: 1px solid var(--muted); border-radius: 3px; font-size: .85em; color: var(--muted); }
.badge.redacted, .badge.archived, .badge.revoked, .badge.ended { border-color: var(--danger); color: var(--danger); }
ul.tree { list-style: none; padding-left: 1.1rem; margin: .2rem 0; }
ul.tree.root { padding-left: 0; }
ul.tree li { margin: .15rem 0; }
summary { cursor: pointer; }
.diff .add, .split .add { background: #dff5e3; }
.diff .del, .split .del { background: #fde2e2; }
.diff .hunk { color: var(--muted); }
table.split td { font: 14px/1.4 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; width: 50%; }
table.split th { overflow-wrap: anywhere; }
dialog { max-width: min(48rem, 95vw); border: 2px solid var(--fg); border-radius: 6px; }
dialog::backdrop { background: rgba(0,0,0,.45); }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.pager { margin: .5rem 0; }
@media (max-width: 700px) {
  header.top .who { margin-left: 0; }
  table.responsive thead { display: none; }
  table.responsive tr { display: block; border-bottom: 2px solid var(--line); padding: .3rem 0; }
  table.responsive td { display: block; border: none; padding: .1rem .25rem; }
  table.responsive td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  table.split th, table.split td { display: block; width: 100%; }
  table.split tr.same td[data-side="new"], table.split td:empty { display: none; }
  table.split td::before { content: attr(data-side) ": "; font-weight: 600; color: var(--muted); }
}
`;

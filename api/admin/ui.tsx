/** @module Small pieces every console page uses: times, sizes, actors, the CSRF field, errors, pagers. */
import type { Child } from 'hono/jsx';
import type { Actor } from '../../src/index.js';

/** "3 min ago" with the exact UTC time beside it (and in `datetime`), both readable without hovering. */
export function Time({ at, now }: { at: string | null; now: string }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <time datetime={at} title={at}>
      {relative(at, now)} <span class="abs">({at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')})</span>
    </time>
  );
}

export function relative(at: string, now: string): string {
  const s = Math.round((Date.parse(now) - Date.parse(at)) / 1000);
  const ahead = s < 0;
  const a = Math.abs(s);
  const [n, unit] = a < 60 ? [a, 's'] : a < 3600 ? [Math.floor(a / 60), 'min'] : a < 86400 ? [Math.floor(a / 3600), 'h'] : [Math.floor(a / 86400), 'd'];
  if (a < 5) return 'just now';
  return ahead ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

/** Sizes in KB, one decimal: the unit everywhere in the console. */
export function kb(bytes: number | null): string {
  return bytes === null ? '—' : `${(bytes / 1024).toFixed(bytes < 1024 ? 2 : 1)} KB`;
}

/**
 * An actor as a person reads it: the key's name when the caller may see it, else its id; a session
 * links to the sessions page of the workspace's `root`.
 */
export function ActorName({ actor, keyNames, root }: { actor: Actor; keyNames: ReadonlyMap<string, string>; root: string }) {
  if (actor.type === 'session_actor') {
    return <span>session <a href={`${root}/sessions#${actor.sessionId}`}><code>{actor.sessionId}</code></a></span>;
  }
  const name = keyNames.get(actor.apiKeyId);
  return name ? <span>key <strong>{name}</strong> <code class="muted">{actor.apiKeyId}</code></span> : <span>key <code>{actor.apiKeyId}</code></span>;
}

/**
 * What a field takes, said beside its name inside the <label>: in normal weight and muted, so
 * only the name reads bold, and read out with the name.
 */
export function Hint({ children }: { children: Child }) {
  return <span class="hint">{children}</span>;
}

export function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="csrf" value={token} />;
}

/** `id`: when the message is about one field, the field names it (`errorOf`), so a screen reader reads it with the field. */
export function Alert({ message, id }: { message: string | undefined; id?: string }) {
  return message ? <p class="alert" role="alert" id={id}>{message}</p> : null;
}

/** A field's attributes for the Alert with this id, when it shows: marked invalid and described by it. */
export function errorOf(id: string, message: string | undefined): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string } {
  return message ? { 'aria-invalid': 'true', 'aria-describedby': id } : {};
}

/**
 * A refused form's message where it belongs: beside the field it names when `fields` (the form's
 * own) holds it, else above the form (`field` null).
 */
export function fieldError(refusal: { message: string; field: string | null } | null | undefined, field: string | null, fields: readonly string[]): string | undefined {
  if (!refusal) return undefined;
  const at = refusal.field !== null && fields.includes(refusal.field) ? refusal.field : null;
  return at === field ? refusal.message : undefined;
}

export function Notice({ message }: { message: string | undefined }) {
  return message ? <p class="notice" role="status">{message}</p> : null;
}

/** A "Next page" link carrying the cursor, when there is one. */
export function Pager({ next, href }: { next: string | null; href: (page: string) => string }) {
  return next ? <p class="pager"><a href={href(next)}>Next page →</a></p> : null;
}

/**
 * A button that opens the <dialog> with this id (assets' console.js), and the dialog itself; `open`:
 * the dialog opens with the page (a refused form inside it, shown again).
 */
export function Confirm({ id, label, title, danger, open, children }: { id: string; label: string; title: string; danger?: boolean; open?: boolean; children: Child }) {
  return (
    <>
      <OpenDialog id={id} label={label} danger={danger} />
      <Dialog id={id} title={title} open={open}>{children}</Dialog>
    </>
  );
}

/** The opening button alone, for a dialog that must sit elsewhere (outside another form: forms do not nest). */
export function OpenDialog({ id, label, danger }: { id: string; label: string; danger?: boolean | undefined }) {
  return <button type="button" class={danger ? 'danger' : 'secondary'} data-dialog={id} aria-haspopup="dialog">{label}</button>;
}

export function Dialog({ id, title, open, children }: { id: string; title: string; open?: boolean | undefined; children: Child }) {
  return (
    <dialog id={id} aria-labelledby={`${id}-title`} data-open={open ? '' : undefined}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </dialog>
  );
}

/**
 * The "Cancel" that closes the dialog it sits in. It takes the focus when the dialog opens
 * (`showModal` focuses the autofocus element), so an Enter pressed twice cancels rather than
 * confirming an action that cannot be undone; a dialog whose first step is typing passes focus={false}.
 */
export function Cancel({ focus = true }: { focus?: boolean }) {
  return <button type="button" class="secondary" data-close="" autofocus={focus}>Cancel</button>;
}

/** A query string from the given, non-empty fields. */
export function qs(fields: Record<string, string | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

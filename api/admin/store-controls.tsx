/** @module A store's *Manage* section: *Save changes* (name, description), *Archive* and *Delete*, and how a refused one comes back. */
import { LIMITS, sha256Hex, type Store } from '../../src/index.js';
import type { Refusal } from './context.js';
import { Alert, Cancel, Confirm, Csrf, errorOf, fieldError, Hint } from './ui.js';

/** A refused *Save changes* or *Delete*, with what was typed: the page comes back with that form holding it. */
export type RefusedStoreForm =
  | { form: 'edit'; name: string; description: string; refusal: Refusal }
  | { form: 'delete'; confirmName: string; refusal: Refusal };

const EDIT_FIELDS = ['name', 'description'];
const DELETE_FIELDS = ['confirm_name'];

export function StoreControls({ store, base, csrf, refused }: { store: Store; base: string; csrf: string; refused: RefusedStoreForm | undefined }) {
  const edit = refused?.form === 'edit' ? refused : undefined;
  const del = refused?.form === 'delete' ? refused : undefined;
  const editError = (field: string | null) => fieldError(edit?.refusal, field, EDIT_FIELDS);
  const deleteError = (field: string | null) => fieldError(del?.refusal, field, DELETE_FIELDS);
  return (
    <section aria-labelledby="manage-h">
      <h2 id="manage-h">Manage</h2>
      {store.archivedAt ? (
        <>
          {/* A Save changes the store's archiving refused: what was typed, read-only, to copy. */}
          {edit ? <><Alert id="edit-error" message={edit.refusal.message} /><TypedStoreFields name={edit.name} description={edit.description} describedBy="edit-error" /></> : null}
          <p class="muted">An archived store cannot be edited; its memories can still be deleted and versions redacted.</p>
        </>
      ) : (
        <form method="post" action={`${base}/edit`} class="stack">
          <Csrf token={csrf} />
          {/* What this form was filled with, by hash (a description may be 12 KiB percent-encoded): only a field typed differently is sent, so a change made elsewhere to one left alone is kept. */}
          <input type="hidden" name="shown_name_sha256" value={shownSha256(store.name)} />
          <input type="hidden" name="shown_description_sha256" value={shownSha256(store.description)} />
          <Alert id="edit-error" message={editError(null)} />
          <label>Name <input name="name" value={edit ? edit.name : store.name} required maxlength={255} autofocus={editError('name') !== undefined} {...errorOf('edit-name-error', editError('name'))} /></label>
          <Alert id="edit-name-error" message={editError('name')} />
          {/* The HTML parser drops one newline right after <textarea>: this one, not the description's own. */}
          <label>Description <Hint>(at most {LIMITS.storeDescription} characters)</Hint> <textarea name="description" rows={2} maxlength={LIMITS.storeDescription} autofocus={editError('description') !== undefined} {...errorOf('edit-description-error', editError('description'))}>{`\n${edit ? edit.description : store.description}`}</textarea></label>
          <Alert id="edit-description-error" message={editError('description')} />
          <div><button type="submit">Save changes</button></div>
        </form>
      )}
      <div class="actions">
        {store.archivedAt ? null : (
          <Confirm id="archive-dialog" label="Archive" title={`Archive ${store.name}?`}>
            <p>Archiving is one-way: the store stays readable, but nothing can be created or changed in it, and its live mounts turn read-only.</p>
            <form method="post" action={`${base}/archive`}>
              <Csrf token={csrf} />
              <button type="submit">Archive store</button> <Cancel />
            </form>
          </Confirm>
        )}{' '}
        {/* After a refused Delete the dialog opens with the page (console.js), on the name that was typed. */}
        <Confirm id="delete-dialog" label="Delete" title={`Delete ${store.name}?`} danger open={del !== undefined}>
          <p>This deletes the store with every memory and version in it, at once. It cannot be undone.</p>
          <form method="post" action={`${base}/delete`} class="stack">
            <Csrf token={csrf} />
            <Alert id="delete-error" message={deleteError(null)} />
            <label>Type the store's name, <strong>{store.name}</strong>, to confirm <input name="confirm_name" value={del?.confirmName} required autocomplete="off" autofocus {...errorOf('confirm-name-error', deleteError('confirm_name'))} /></label>
            <Alert id="confirm-name-error" message={deleteError('confirm_name')} />
            <div><button type="submit" class="danger">Delete store</button> <Cancel focus={false} /></div>
          </form>
        </Confirm>
      </div>
    </section>
  );
}

/**
 * What was typed into *Save changes* when the store can no longer take it (archived or deleted
 * meanwhile): read-only fields, described by the message that says why, so the text can be copied.
 */
export function TypedStoreFields({ name, description, describedBy }: { name: string; description: string; describedBy: string }) {
  return (
    <div class="stack">
      <label>Name <input name="name" value={name} readonly aria-describedby={describedBy} /></label>
      {/* The HTML parser drops one newline right after <textarea>: this one, not the description's own. */}
      <label>Description <textarea name="description" rows={2} readonly aria-describedby={describedBy}>{`\n${description}`}</textarea></label>
    </div>
  );
}

/**
 * The hash of a stored name or description as its field sends it back untouched: the HTML parser
 * reads a CR or CRLF as LF, and the form's CRLF comes back as LF (exactField). *Save changes*
 * compares what was typed with it (store.tsx).
 */
export function shownSha256(stored: string): string {
  return sha256Hex(stored.replace(/\r\n?/g, '\n'));
}

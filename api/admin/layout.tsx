/** @module The console's page frame: head (our CSS and scripts only), navigation by role, sign-out. */
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { ApiKey } from '../../src/index.js';
import { ASSET_URLS } from './assets.js';
import { Csrf } from './ui.js';

export interface Frame {
  key: ApiKey;
  csrf: string;
  /** Where this workspace's pages are: /admin, or /admin/workspaces/<id> for another an operator key opened. */
  root: string;
  /** The workspace the pages act in; its name when the key may read it, else null. */
  workspace: { id: string; name: string | null };
  /** The request's path: the navigation marks the section it is in (aria-current). */
  here: string;
}

export function Page({ title, frame, children }: { title: string; frame: Frame | null; children: Child }) {
  return (
    <>
    {raw('<!DOCTYPE html>')}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {/* htmx would add an inline <style>, which the CSP refuses; console.css has what it needs. */}
        <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false}' />
        <title>{`${title} · mnemo console`}</title>
        <link rel="stylesheet" href={ASSET_URLS.css} />
        <script src="/admin/assets/htmx.min.js" defer></script>
        <script src={ASSET_URLS.js} defer></script>
      </head>
      <body>
        {/* The first thing Tab reaches: past the header and navigation, straight to the page's own content. */}
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="/admin">mnemo console</a>
          {frame ? <Nav frame={frame} /> : null}
        </header>
        {/* tabindex -1: following the skip link moves the focus here, so the next Tab goes on from the content. */}
        <main id="main" tabindex={-1}>{children}</main>
      </body>
    </html>
    </>
  );
}

function Nav({ frame }: { frame: Frame }) {
  const admin = frame.key.role === 'admin';
  const { root } = frame;
  return (
    <>
      <nav aria-label="Console">
        <ul>
          <li><NavLink href={`${root}/stores`} here={frame.here}>Stores</NavLink></li>
          <li><NavLink href={`${root}/sessions`} here={frame.here}>Sessions</NavLink></li>
          {admin ? <li><NavLink href={`${root}/keys`} here={frame.here}>API keys</NavLink></li> : null}
          {admin ? <li><NavLink href={`${root}/admin-actions`} here={frame.here}>Admin log</NavLink></li> : null}
        </ul>
      </nav>
      <div class="who">
        <span>Signed in as <strong>{frame.key.name}</strong> ({frame.key.role})</span>
        <WorkspaceName frame={frame} />
        <form method="post" action="/admin/sign-out" class="inline">
          <Csrf token={frame.csrf} />
          <button type="submit" class="link">Sign out</button>
        </form>
      </div>
    </>
  );
}

/**
 * A section's link, marked for a screen reader (and styled) when the page is in that section:
 * `page` on the section's own page, `true` on a page below it (a store's memory under Stores).
 */
function NavLink({ href, here, children }: { href: string; here: string; children: Child }) {
  const current = here === href ? 'page' : here.startsWith(`${href}/`) ? 'true' : undefined;
  return <a href={href} aria-current={current}>{children}</a>;
}

/** The workspace the pages act in: an operator key switches it; any other key is told it has only this one. */
function WorkspaceName({ frame: { key, workspace } }: { frame: Frame }) {
  const name = workspace.name ?? <code>{workspace.id}</code>;
  if (key.allWorkspaces) {
    return <span class="workspace">Workspace <strong>{name}</strong> <a href="/admin/workspaces">Switch workspace</a></span>;
  }
  return <span class="workspace">Workspace <strong>{name}</strong> <a href="/admin/workspaces" class="muted">(this key's only one)</a></span>;
}

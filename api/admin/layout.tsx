/** @module The console's page frame: head (our CSS and scripts only), navigation by role, sign-out. */
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { ApiKey } from '../../src/index.js';
import { Csrf } from './ui.js';

export interface Frame {
  key: ApiKey;
  csrf: string;
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
        <link rel="stylesheet" href="/admin/assets/console.css" />
        <script src="/admin/assets/htmx.min.js" defer></script>
        <script src="/admin/assets/console.js" defer></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/admin">mnemo console</a>
          {frame ? <Nav frame={frame} /> : null}
        </header>
        <main id="main">{children}</main>
      </body>
    </html>
    </>
  );
}

function Nav({ frame }: { frame: Frame }) {
  const admin = frame.key.role === 'admin';
  return (
    <>
      <nav aria-label="Console">
        <ul>
          <li><a href="/admin/stores">Stores</a></li>
          <li><a href="/admin/sessions">Sessions</a></li>
          {admin ? <li><a href="/admin/keys">API keys</a></li> : null}
          {admin ? <li><a href="/admin/admin-actions">Admin log</a></li> : null}
        </ul>
      </nav>
      <div class="who">
        <span>Signed in as <strong>{frame.key.name}</strong> ({frame.key.role})</span>
        <form method="post" action="/admin/sign-out" class="inline">
          <Csrf token={frame.csrf} />
          <button type="submit" class="link">Sign out</button>
        </form>
      </div>
    </>
  );
}

/**
 * @module The console's static files, all served by mnemo (no CDN): htmx from the htmx.org
 * package, one stylesheet and one small script. Each is read once and cached by browsers for a
 * day; the page sets a Content-Security-Policy that allows scripts and styles from here only.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono, type Context } from 'hono';
import type { AdminEnv } from './env.js';
import { CONSOLE_CSS } from './style.js';

/**
 * Opens the <dialog> a button names (data-dialog) and closes the one a "Cancel" sits in: native
 * dialogs are modal, keep focus inside and close on Escape. A dialog marked data-open (a refused
 * form in it, shown again) opens with the page; the script is deferred, so the page is parsed by
 * then. Inline scripts are refused by the CSP.
 */
const CONSOLE_JS = `document.querySelectorAll('dialog[data-open]').forEach(function (d) { d.showModal(); });
document.addEventListener('click', function (e) {
  var open = e.target.closest('[data-dialog]');
  if (open) { var d = document.getElementById(open.getAttribute('data-dialog')); if (d) { e.preventDefault(); d.showModal(); } return; }
  var close = e.target.closest('[data-close]');
  if (close) { e.preventDefault(); close.closest('dialog').close(); }
});
`;

/**
 * Where the pages load our stylesheet and script from: each URL names its content's hash, so a
 * browser that cached the last release's copy for its day fetches the new one at once.
 */
export const ASSET_URLS = {
  css: `/admin/assets/console.css?v=${hashOf(CONSOLE_CSS)}`,
  js: `/admin/assets/console.js?v=${hashOf(CONSOLE_JS)}`,
} as const;

export function assetRoutes() {
  const app = new Hono<AdminEnv>();
  let htmx: Uint8Array<ArrayBuffer> | undefined;
  const serve = (type: string, body: () => Uint8Array<ArrayBuffer> | string) => (c: Context) => {
    c.header('content-type', type);
    c.header('cache-control', 'public, max-age=86400, immutable');
    return c.body(body());
  };
  app.get('/htmx.min.js', serve('text/javascript; charset=utf-8', () => (htmx ??= new Uint8Array(readFileSync(htmxFile())))));
  app.get('/console.css', serve('text/css; charset=utf-8', () => CONSOLE_CSS));
  app.get('/console.js', serve('text/javascript; charset=utf-8', () => CONSOLE_JS));
  return app;
}

function htmxFile(): string {
  return join(dirname(createRequire(import.meta.url).resolve('htmx.org/package.json')), 'dist', 'htmx.min.js');
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

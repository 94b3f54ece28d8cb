/**
 * @module Every Location the console sends: a same-origin /admin path, re-serialised by the URL
 * parser so it is plain ASCII. A header value with a control character would make the response
 * itself throw (a 500 after the work was done), and a `next` from a query or form is the caller's.
 */
import type { Context, MiddlewareHandler } from 'hono';

/** Where a `next` or a built path leads: itself when it is a console path, else the console's home. */
export function safeNext(next: string | null | undefined): string {
  const home = '/admin';
  // Browsers drop tabs and newlines from a Location before resolving it ("/\t/evil" is "//evil"): refuse, don't strip.
  if (!next || !next.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(next)) return home;
  let url: URL;
  try {
    url = new URL(next, ORIGIN);
  } catch {
    return home;
  }
  if (url.origin !== ORIGIN || !/^\/admin(\/|$)/.test(url.pathname)) return home;
  return url.pathname + url.search + url.hash;
}

/** A 303 to a console path (built with `segment` for every id in it), through safeNext all the same. */
export function seeOther(c: Context, path: string): Response {
  return c.redirect(safeNext(path), 303);
}

/**
 * A GET or HEAD of a console path with a trailing slash (`/admin/`, `/admin/stores/`) is a 301 to
 * the path without it, query kept: the console's routes have none, and it was a 404. Before the
 * session check, as the redirect tells nothing.
 */
export function trimTrailingSlash(): MiddlewareHandler {
  return async function trimTrailingSlashMiddleware(c, next) {
    if ((c.req.method === 'GET' || c.req.method === 'HEAD') && c.req.path.endsWith('/')) {
      const url = new URL(c.req.url);
      return c.redirect(safeNext(url.pathname.replace(/\/+$/, '') + url.search), 301);
    }
    await next();
    return undefined;
  };
}

/** One path segment from a value (an id from the URL, a returned id): encoded, so it stays one segment. */
export const segment = (value: string): string => encodeURIComponent(value);

const ORIGIN = 'http://console.invalid';

/**
 * @module The console's sign-in cookie and CSRF check. The cookie names a server-side session
 * (src/service/console-sessions.ts) and is HttpOnly, SameSite=Strict, Path=/admin, and Secure when
 * the request came over HTTPS (the server trusts no X-Forwarded-Proto, so neither does this). Every
 * POST but the sign-in carries the session's CSRF token in a form field, and none may come from another site.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie, deleteCookie } from 'hono/cookie';
import { MnemoError, type Service } from '../../src/index.js';
import { callerFor } from '../auth.js';
import { closeIfBodyUnread } from '../errors.js';
import type { AdminEnv } from './env.js';
import { withNotice } from './notices.js';

export const COOKIE = 'mnemo_console';

export function sessionCookie(c: Context, id: string): void {
  setCookie(c, COOKIE, id, {
    path: '/admin',
    httpOnly: true,
    sameSite: 'Strict',
    secure: new URL(c.req.url).protocol === 'https:',
    // No Max-Age: the server ends the session after 12 h idle; the browser drops the cookie when it closes.
  });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, COOKIE, { path: '/admin' });
}

export function cookieOf(c: Context): string | undefined {
  return getCookie(c, COOKIE);
}

/**
 * Resumes the console session and acts as its key exactly as the API's auth would (role, workspace,
 * grants). Without one a page or a form redirects to sign-in; anything else (an htmx fragment) is 401.
 */
export function consoleSession(service: Service): MiddlewareHandler<AdminEnv> {
  return async function consoleSessionMiddleware(c, next) {
    const sent = cookieOf(c);
    const resumed = await service.consoleSessions.resume(sent);
    if (!resumed) {
      // Only a cookie that came and names no session is cleared. A link followed from another site
      // arrives without the SameSite=Strict cookie; deleting it then would sign the user out.
      if (sent !== undefined) clearSessionCookie(c);
      const url = new URL(c.req.url);
      if (c.req.method === 'GET' && !c.req.header('hx-request')) {
        return c.redirect(`/admin/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
      }
      if (c.req.method === 'POST' && !c.req.header('hx-request')) {
        // A form sent after the session ended (signed out in another tab, idle, its key revoked): back
        // to sign-in, saying so (a Sign out just says it is done); nothing was done, the body goes unread.
        closeIfBodyUnread(c);
        return c.redirect(withNotice('/admin/sign-in', c.req.path === '/admin/sign-out' ? 'signed_out' : 'session_over'), 303);
      }
      if (c.req.header('hx-request')) c.header('hx-redirect', '/admin/sign-in');
      throw new MnemoError('unauthenticated', 'not signed in, or the console session ended: sign in again');
    }
    c.set('console', resumed);
    c.set('apiKey', resumed.key);
    c.set('caller', callerFor(resumed.key, resumed.key.workspaceId));
    c.set('root', '/admin');
    await next();
    return undefined;
  };
}

/**
 * Refuses a POST that a browser says came from another site (Sec-Fetch-Site, else an Origin that
 * is not this host). The sign-in form has no CSRF token to check: without this a page elsewhere
 * could sign a visitor in as its own key, replacing their session. Clients that are not browsers
 * send neither header and are let through; they have no cookie to misuse.
 */
export function sameOriginPosts(): MiddlewareHandler {
  return async function sameOriginPostsMiddleware(c, next) {
    if (c.req.method === 'POST' && fromElsewhere(c)) {
      throw new MnemoError('forbidden', 'a console form posted from another site is refused: open the console on this server and use its forms');
    }
    await next();
  };
}

function fromElsewhere(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = c.req.header('origin');
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== (c.req.header('host') ?? new URL(c.req.url).host);
  } catch {
    return true; // "null" (a sandboxed frame, a data: URL) or garbage
  }
}

/** Refuses a POST whose `csrf` field is not this session's token (read after the session, so only signed-in callers send a body). */
export function csrfField(form: URLSearchParams, c: Context<AdminEnv>): void {
  const sent = Buffer.from(form.get('csrf') ?? '', 'utf8');
  const want = Buffer.from(c.var.console.session.csrf, 'utf8');
  if (sent.length !== want.length || !timingSafeEqual(sent, want)) {
    throw new MnemoError('forbidden', 'this form is missing its CSRF token or carries another session\'s: reload the page and try again');
  }
}

/** A form body (application/x-www-form-urlencoded), its size already bounded by the body limit. */
export async function formBody(c: Context): Promise<URLSearchParams> {
  return new URLSearchParams(await c.req.text());
}

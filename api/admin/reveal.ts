/**
 * @module A new key's secret between *Create key*'s POST and the page that shows it, so the page is
 * a POST-redirect-GET: reloading it neither re-posts the form nor mints a second key. The secret
 * rides in a cookie for that one redirect, never in the URL and never kept on the server (so it
 * works behind a load balancer): sealed with AES-256-GCM under a key derived from the console
 * session's own cookie, so only that session can open it; HttpOnly, SameSite=Strict,
 * Path=/admin/keys (the workspace's keys page: /admin/workspaces/<id>/keys in another), no Max-Age,
 * and cleared by the GET that shows it, so it is shown once.
 */
import { createHmac } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { seal, unseal } from '../../src/index.js';
import type { AdminEnv } from './env.js';
import { cookieOf } from './session.js';

const REVEAL = 'mnemo_new_key';
/** The keys page of the workspace the request acts in: the cookie goes there only. */
const pathOf = (c: Context<AdminEnv>): string => `${c.var.root}/keys`;

export interface Revealed {
  name: string;
  secret: string;
}

/** Sets the sealed secret for the next GET of /admin/keys. */
export function revealOnce(c: Context<AdminEnv>, revealed: Revealed): void {
  const value = seal(sealKey(c), JSON.stringify(revealed)).toString('base64url');
  setCookie(c, REVEAL, value, { path: pathOf(c), httpOnly: true, sameSite: 'Strict', secure: new URL(c.req.url).protocol === 'https:' });
}

/** The secret a create left for this page, once: the cookie is cleared whether or not it opens. */
export function takeRevealed(c: Context<AdminEnv>): Revealed | null {
  const value = getCookie(c, REVEAL);
  if (value === undefined) return null;
  deleteCookie(c, REVEAL, { path: pathOf(c) });
  const plain = unseal(sealKey(c), Buffer.from(value, 'base64url'));
  if (plain === null) return null; // sealed in another session, or not ours
  try {
    const opened = JSON.parse(plain) as Revealed;
    return typeof opened?.name === 'string' && typeof opened.secret === 'string' ? opened : null;
  } catch {
    return null;
  }
}

function sealKey(c: Context): Buffer {
  return createHmac('sha256', cookieOf(c) ?? '').update('mnemo console: a new key secret').digest();
}

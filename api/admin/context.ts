/** @module What console handlers read from a request: the page frame, the posted form, the key names an actor shows. */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { MnemoError, type Actor, type ErrorCode, type Service } from '../../src/index.js';
import { HTTP_ERRORS } from '../errors.js';
import type { AdminEnv } from './env.js';
import type { Frame } from './layout.js';

export type AdminContext = Context<AdminEnv>;

export function frameOf(c: AdminContext): Frame {
  const workspace = c.var.workspace ?? { id: c.var.caller.workspaceId, name: null };
  return { key: c.var.console.key, csrf: c.var.console.session.csrf, root: c.var.root, workspace, here: c.req.path };
}

/** The form fields the CSRF check already read (a body can be read once). */
export function formOf(c: AdminContext): URLSearchParams {
  return c.var.form ?? new URLSearchParams();
}

/** A form field, trimmed; '' when absent. */
export function field(c: AdminContext, name: string): string {
  return (formOf(c).get(name) ?? '').trim();
}

/**
 * A form field exactly as typed ('' when absent), for values compared with or written over stored
 * text (a name may begin or end with spaces); a textarea's CRLF, which form encoding always sends,
 * back to LF.
 */
export function exactField(c: AdminContext, name: string): string {
  return (formOf(c).get(name) ?? '').replace(/\r\n/g, '\n');
}

/** Refusals a form comes back from (what was typed, and why): the input's or a limit's. Others (a key's role) keep the error page. */
const FORM_REFUSALS: ReadonlySet<ErrorCode> = new Set(['invalid_request', 'limit_exceeded']);

/** Why a form was refused: the API's message and status, and the field it names (`details.field`), if any. */
export interface Refusal {
  message: string;
  field: string | null;
  status: ContentfulStatusCode;
}

/**
 * The refusal a form shows beside its fields, or null for an error the error page answers. A 404
 * that names a field (a store a new key is to be limited to, deleted meanwhile) is the input's too.
 */
export function refusalOf(err: unknown): Refusal | null {
  if (!(err instanceof MnemoError)) return null;
  if (!FORM_REFUSALS.has(err.code) && !(err.code === 'not_found' && err.details.field !== undefined)) return null;
  return { message: err.message, field: err.details.field ?? null, status: HTTP_ERRORS[err.code].status };
}

/**
 * Key id → name for the actors a page shows: only an admin may read keys, so others see ids. Only
 * those keys are read (a workspace may hold many thousands), each by its id.
 */
export async function keyNames(service: Service, c: AdminContext, actors: Iterable<Actor>): Promise<Map<string, string>> {
  const own = c.var.console.key;
  if (own.role !== 'admin') return new Map([[own.id, own.name]]);
  const ids = new Set([...actors].flatMap((a) => (a.type === 'api_actor' ? [a.apiKeyId] : [])));
  // A key the caller may not see (an operator's, another workspace's) keeps showing as its id.
  const keys = await Promise.all([...ids].map((id) => service.keys.getKey(c.var.caller, id).catch(() => null)));
  return new Map([[own.id, own.name], ...keys.flatMap((k) => (k ? [[k.id, k.name] as const] : []))]);
}

export const isAdmin = (c: AdminContext) => c.var.console.key.role === 'admin';
export const canWrite = (c: AdminContext) => c.var.console.key.role !== 'read_only';

/** The query string as the API's parsers take it (strict percent-decoding, last value wins). */
export { query } from '../request.js';

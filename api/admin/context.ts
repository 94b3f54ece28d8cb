/** @module What console handlers read from a request: the page frame, the posted form, the key names an actor shows. */
import type { Context } from 'hono';
import type { Service } from '../../src/index.js';
import type { AdminEnv } from './env.js';
import type { Frame } from './layout.js';

export type AdminContext = Context<AdminEnv>;

export function frameOf(c: AdminContext): Frame {
  return { key: c.var.console.key, csrf: c.var.console.session.csrf };
}

/** The form fields the CSRF check already read (a body can be read once). */
export function formOf(c: AdminContext): URLSearchParams {
  return c.var.form ?? new URLSearchParams();
}

/** A form field, trimmed; '' when absent. */
export function field(c: AdminContext, name: string): string {
  return (formOf(c).get(name) ?? '').trim();
}

/** Key id → name, for showing actors: only an admin may list keys, so others see ids. */
export async function keyNames(service: Service, c: AdminContext): Promise<Map<string, string>> {
  if (c.var.console.key.role !== 'admin') return new Map([[c.var.console.key.id, c.var.console.key.name]]);
  const keys = await service.keys.listKeys(c.var.caller);
  return new Map(keys.map((k) => [k.id, k.name]));
}

export const isAdmin = (c: AdminContext) => c.var.console.key.role === 'admin';
export const canWrite = (c: AdminContext) => c.var.console.key.role !== 'read_only';

/** The query string as the API's parsers take it (strict percent-decoding, last value wins). */
export { query } from '../request.js';

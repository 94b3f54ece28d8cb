/** @module Reading requests strictly: UTF-8 JSON bodies and percent-decoded query strings. */
import type { Context } from 'hono';
import { decodeHeader, MnemoError, parseEmptyBody, type Query } from '../src/index.js';
import type { AppEnv } from './env.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request header by its lower-case name (Node keys its parsed headers in lower case), from Node's
 * parsed headers when there is a Node request: `c.req.header()` makes @hono/node-server build a web
 * `Headers` of every header first, which cost more than the lookup.
 */
export function header(c: Context<AppEnv>, name: Lowercase<string>): string | undefined {
  const incoming = c.env?.incoming;
  if (!incoming) return c.req.header(name);
  const v = incoming.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** A header's value read as the UTF-8 it was sent as (Node hands over one character per byte); bytes that are not UTF-8 are a 400. */
export function textHeader(c: Context<AppEnv>, name: Lowercase<string>, label: string = name): string | undefined {
  const raw = header(c, name);
  return raw === undefined ? undefined : decodeHeader(raw, label);
}

/** The JSON body, or {} when there is none. Bad UTF-8 and malformed JSON are 400s, never 500s. */
export async function jsonBody(c: Context<AppEnv>): Promise<unknown> {
  const bytes = await bodyBytes(c);
  if (bytes.byteLength === 0) return {};
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (err) {
    throw new MnemoError('invalid_utf8', 'request body is not valid UTF-8', {}, { cause: err });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new MnemoError('invalid_request', `request body is not valid JSON: ${(err as Error).message}`, {}, { cause: err });
  }
}

/** A route that takes no body: none, an empty one or `{}`; anything else is a 400 like any body's mistake. */
export async function noBody(c: Context<AppEnv>): Promise<void> {
  parseEmptyBody(await jsonBody(c));
}

/**
 * The raw body: the one the body limit already read, else straight from Node's request stream
 * (the web Request and stream that `c.req.arrayBuffer()` would build cost more than the parsing),
 * else through Hono when there is no Node request (app.request in tests).
 */
async function bodyBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  if (c.var.body) return c.var.body;
  const incoming = c.env?.incoming;
  if (!incoming) return new Uint8Array(await c.req.arrayBuffer());
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Query parameters decoded strictly: a percent-encoding that is not UTF-8 is refused instead of
 * being turned into U+FFFD or kept raw. When a name repeats, the last value wins.
 */
export function query(c: Context): Query {
  const url = c.req.url;
  const q = url.indexOf('?');
  const out: Query = {};
  if (q < 0) return out;
  for (const part of url.slice(q + 1).split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    out[name] = decode(eq < 0 ? '' : part.slice(eq + 1));
  }
  return out;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch (err) {
    throw new MnemoError('invalid_request', 'query string is not valid percent-encoded UTF-8', {}, { cause: err });
  }
}

/**
 * @module The official SDK pointed at a test server, plus a raw `fetch` for the requests the SDK
 * cannot express (malformed bodies, missing keys, Bearer headers).
 */
import Anthropic, {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ContentTooLargeError,
  NotFoundError,
  PermissionDeniedError,
} from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect } from 'vitest';
import { startServer, type RunningServer, type StartOptions } from './server.js';

export function sdkClient(url: string, apiKey: string): Anthropic {
  return new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });
}

/**
 * One real server for a test file: started before its tests, stopped after them. `ready` receives
 * the server and an admin SDK client, so a file keeps its own variables.
 */
export function useServer(ready: (server: RunningServer, client: Anthropic) => void | Promise<void>, options: StartOptions = {}): void {
  let server: RunningServer | undefined;
  beforeAll(async () => {
    server = await startServer(options);
    await ready(server, sdkClient(server.url, server.adminKey));
  });
  afterAll(async () => {
    await server?.stop();
  });
}

/** The parsed error envelope, as the SDK keeps it on `err.error`. */
export interface ErrorEnvelope {
  type: 'error';
  error: { type: string; message: string; conflicting_path?: string; conflicting_memory_id?: string };
  request_id: string;
}

const SDK_CLASS: Record<number, abstract new (...args: never[]) => APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: ContentTooLargeError,
};

/**
 * Awaits a call that must fail with `status` and envelope `type`; checks the SDK error class, the
 * envelope shape and that the `request-id` header matches the body. Returns the error body.
 */
export async function expectApiError(call: Promise<unknown>, status: number, type: string): Promise<ErrorEnvelope['error']> {
  const err: unknown = await call.then(
    (value) => {
      throw new Error(`expected ${status} ${type}, got success: ${JSON.stringify(value).slice(0, 300)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SDK_CLASS[status] ?? APIError);
  const apiErr = err as APIError;
  expect(apiErr.status).toBe(status);
  const body = apiErr.error as ErrorEnvelope;
  expect(body).toMatchObject({ type: 'error', error: { type, message: expect.any(String) } });
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.request_id).toMatch(/^req_\w+$/);
  expect(apiErr.requestID).toBe(body.request_id);
  return body.error;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface RawOptions {
  apiKey?: string | null;
  headers?: Record<string, string>;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
  /** Where the request goes: the global fetch (a real server), or an in-process app's (in-process.ts). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** One HTTP request without the SDK; the JSON body is parsed when there is one. */
export async function rawRequest(url: string, method: string, path: string, { apiKey = null, headers = {}, body, fetch = globalThis.fetch }: RawOptions = {}): Promise<RawResponse> {
  const init: RequestInit & { duplex?: 'half' } = {
    method,
    headers: {
      ...(body !== undefined && !('content-type' in headers) ? { 'content-type': 'application/json' } : {}),
      ...(apiKey === null ? {} : { 'x-api-key': apiKey }),
      ...headers,
    },
  };
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = 'half';
  const res = await fetch(url + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON; keep the text so the assertion shows it
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * One API call to a real server with `apiKey`, the body (when given) sent as JSON: the status,
 * headers and parsed body, as `rawRequest` answers. Nothing is asserted, so refusals can be checked.
 */
export function jsonRequest(server: Pick<RunningServer, 'url'>, method: string, path: string, apiKey: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(server.url, method, path, { apiKey, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** A key as POST /v1/api_keys answers it: the only answer that carries the secret. */
export interface MintedKey {
  type: 'api_key';
  id: string;
  name: string;
  role: string;
  workspace_id: string;
  memory_store_ids: string[] | null;
  revoked_at: string | null;
  secret: string;
}

export interface MintOptions {
  /** The key that mints it; the server's admin key unless given. */
  apiKey?: string;
  /** More request headers, such as anthropic-workspace-id. */
  headers?: Record<string, string>;
  /** More body fields, such as memory_store_ids; `name` is "<role> key" unless given. */
  body?: Record<string, unknown>;
}

/** Where a test's setup calls the API: a real server (its URL), or an in-process app (its `raw`, in-process.ts). */
export type ApiTarget = Pick<RunningServer, 'url' | 'adminKey'> | { adminKey: string; raw(method: string, path: string, options?: RawOptions): Promise<RawResponse> };

/**
 * One POST of a test's setup, its body sent as JSON, that must succeed: the test fails at once,
 * naming the request and the answer, unless the server answers 200 (so a failed setup is not
 * found later as a puzzling failure). The parsed body.
 */
export async function setupPost<T>(target: ApiTarget, path: string, body: unknown, { apiKey = target.adminKey, headers = {} }: { apiKey?: string; headers?: Record<string, string> } = {}): Promise<T> {
  const res = 'raw' in target
    ? await target.raw('POST', path, { apiKey, headers, body: JSON.stringify(body) })
    : await jsonRequest(target, 'POST', path, apiKey, body, headers);
  expect(res.status, `setup: POST ${path} ${JSON.stringify(body).slice(0, 200)} answered ${res.status}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as T;
}

/** A new API key of `role` through the API, on a real server or an in-process app; the test fails at once unless it answers 200. */
export function mintKey(target: ApiTarget, role: string, { apiKey = target.adminKey, headers = {}, body = {} }: MintOptions = {}): Promise<MintedKey> {
  return setupPost<MintedKey>(target, '/v1/api_keys', { name: `${role} key`, role, ...body }, { apiKey, headers });
}

/** A new workspace through the API (an operator key's); the test fails at once unless it answers 200. */
export function createWorkspace(target: ApiTarget, name: string, { apiKey = target.adminKey }: { apiKey?: string } = {}): Promise<{ type: 'workspace'; id: string; name: string }> {
  return setupPost(target, '/v1/workspaces', { name }, { apiKey });
}

/** Asserts a raw response is the error envelope with this status and type. */
export function expectRawError(res: RawResponse, status: number, type: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({
    status,
    body: { type: 'error', error: { type, message: expect.any(String) }, request_id: expect.stringMatching(/^req_\w+$/) },
  });
  expect(res.headers.get('request-id')).toBe((res.body as ErrorEnvelope).request_id);
}

/** A new store on `server` mounted in a new session: the store's id and the mount's host path. */
export async function mountedStore(server: RunningServer, name: string): Promise<{ storeId: string; mnt: string }> {
  const client = sdkClient(server.url, server.adminKey);
  const store = await client.beta.memoryStores.create({ name });
  const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
    apiKey: server.adminKey,
    body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id }] }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { storeId: store.id, mnt: (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path };
}

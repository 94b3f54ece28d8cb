/** @module The Hono environment: variables middleware set for handlers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKey, Caller } from '../src/index.js';

export interface AppEnv {
  /** Set by @hono/node-server; absent when the app is called directly (app.request in tests). */
  Bindings: { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
  Variables: {
    /** A chunked request's body, read (and size-checked) by the body limit. */
    body?: Uint8Array;
    requestId: string;
    caller: Caller;
    /** The authenticated key (auth middleware). */
    apiKey: ApiKey;
    /** Set when the body stopped arriving and the request was answered 408 (inflight.ts). */
    bodyTimedOut?: boolean;
  };
}

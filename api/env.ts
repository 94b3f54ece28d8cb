/** @module The Hono environment: variables middleware set for handlers. */
import type { Caller } from '../src/index.js';

export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
  };
}

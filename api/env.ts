/** @module The Hono environment: variables middleware set for handlers. */
import type { ApiKey, Caller } from '../src/index.js';

export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
    /** The authenticated key (auth middleware). */
    apiKey: ApiKey;
  };
}

/** @module The console's Hono environment: the API's variables plus the signed-in console session. */
import type { ApiKey, ConsoleSession } from '../../src/index.js';
import type { AppEnv } from '../env.js';

export interface AdminEnv {
  Bindings: AppEnv['Bindings'];
  Variables: AppEnv['Variables'] & {
    /** Set by the console's session middleware on every page but sign-in. */
    console: { session: ConsoleSession; key: ApiKey };
    /** A POST's form fields, read once by the CSRF check. */
    form?: URLSearchParams;
  };
}

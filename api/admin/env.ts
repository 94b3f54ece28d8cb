/** @module The console's Hono environment: the API's variables plus the signed-in console session. */
import type { ApiKey, ConsoleSession } from '../../src/index.js';
import type { AppEnv } from '../env.js';

export interface AdminEnv {
  Bindings: AppEnv['Bindings'];
  Variables: AppEnv['Variables'] & {
    /** Set by the console's session middleware on every page but sign-in. */
    console: { session: ConsoleSession; key: ApiKey };
    /**
     * The console's root for the workspace the request acts in: `/admin` for the key's own, or
     * `/admin/workspaces/<id>` for another an operator key opened (workspace.ts). Every link starts here.
     */
    root: string;
    /** The acting workspace as the header names it: its name when the key may read it (admin keys), else null. */
    workspace?: { id: string; name: string | null };
    /** A POST's form fields, read once by the CSRF check. */
    form?: URLSearchParams;
  };
}

// test/fs/as-of-sessions.test.ts against a server on PostgreSQL (test/helpers/engine.ts).
import { serveOnPostgres } from '../../helpers/engine.js';

if (serveOnPostgres()) await import('../as-of-sessions.test.js');

// test/api/continuity.test.ts against a server on PostgreSQL (test/helpers/engine.ts).
import { serveOnPostgres } from '../../helpers/engine.js';

if (serveOnPostgres()) await import('../continuity.test.js');

// test/api/fuzz.test.ts against a server on PostgreSQL (test/helpers/engine.ts).
import { serveOnPostgres } from '../../helpers/engine.js';

if (serveOnPostgres()) await import('../fuzz.test.js');

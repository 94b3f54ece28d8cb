// test/api/forks.test.ts against a PostgreSQL database (test/helpers/engine.ts).
import { serveOnPostgres } from '../../helpers/engine.js';

if (serveOnPostgres()) await import('../forks.test.js');

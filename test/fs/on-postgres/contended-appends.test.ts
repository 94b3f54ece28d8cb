// test/fs/contended-appends.test.ts against a server on PostgreSQL (test/helpers/engine.ts).
import { serveOnPostgres } from '../../helpers/engine.js';

if (serveOnPostgres()) await import('../contended-appends.test.js');

// test/api/redaction-holders.test.ts against a server on PostgreSQL (test/helpers/engine.ts).
import { serveOnPostgres } from '../../helpers/engine.js';

if (serveOnPostgres()) await import('../redaction-holders.test.js');

/**
 * A server on PostgreSQL sends a transaction's held statements (BEGIN, SAVEPOINT, RELEASE, a write
 * nothing reads) with the statement they ride with, and the server answers them together: one
 * round trip on the wire, not one per statement (src/storage/postgres/db.ts, `send`). Its pooled
 * connections pipeline (node-postgres `pipeline`), so it never queues a query behind another on one
 * connection, which node-postgres 8 warns about on stderr (and pg@9 refuses).
 *
 * The server reaches PostgreSQL through a proxy here that reads the protocol both ways: a round
 * trip starts when a connection sends while nothing it sent is unanswered, and holds what it sends
 * until every Sync and simple query of it has its ReadyForQuery.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTENER_APPLICATION_NAME } from '../../src/storage/postgres/listener.js';
import { READ_LANE_APPLICATION_NAME } from '../../src/storage/postgres/read-lane.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { sdkClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

/** Where a postgres:// URL's server listens: a Unix socket (`?host=/dir`) or a TCP host and port. */
function target(url: string): { path: string } | { host: string; port: number } {
  const m = /^postgres(?:ql)?:\/\/(?:[^@/?]*@)?([^/?]*)(?:\/[^?]*)?(?:\?(.*))?$/.exec(url);
  if (!m) throw new Error(`not a postgres:// URL: ${url}`);
  const query = new URLSearchParams(m[2] ?? '');
  const [authorityHost, authorityPort] = m[1]!.split(':');
  const host = query.get('host') ?? (authorityHost || 'localhost');
  const port = Number(query.get('port') ?? authorityPort ?? 5432);
  return host.startsWith('/') ? { path: `${host}/.s.PGSQL.${port}` } : { host, port };
}

/** `url` with the server at 127.0.0.1:`port` instead (user, password and database kept). */
function via(url: string, port: number): string {
  const m = /^(postgres(?:ql)?:\/\/)([^@/?]*@)?[^/?]*(\/[^?]*)?(?:\?(.*))?$/.exec(url)!;
  const query = new URLSearchParams(m[4] ?? '');
  query.delete('host');
  query.delete('port');
  const rest = query.toString();
  return `${m[1]}${m[2] ?? ''}127.0.0.1:${port}${m[3] ?? '/'}${rest ? `?${rest}` : ''}`;
}

/** One client connection as the proxy saw it: its `application_name`, and its round trips' statements. */
interface Seen {
  application: string;
  roundTrips: string[][];
}

/** Reads PostgreSQL protocol messages from a byte stream: the first one (startup) has no type byte. */
function messages(onMessage: (type: string, body: Buffer) => void, untyped: boolean): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let first = untyped;
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const head = first ? 0 : 1;
      if (buffered.length < head + 4) return;
      const length = buffered.readInt32BE(head);
      if (buffered.length < head + length) return;
      onMessage(first ? '' : String.fromCharCode(buffered[0]!), buffered.subarray(head + 4, head + length));
      buffered = buffered.subarray(head + length);
      first = false;
    }
  };
}

const cstrings = (body: Buffer): string[] => body.toString('utf8').split('\0');

function startProxy(to: string): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((client: Socket) => {
    const conn: Seen = { application: '', roundTrips: [] };
    seen.push(conn);
    const named = new Map<string, string>();
    // Syncs and simple queries sent and not yet answered with ReadyForQuery; the round trip they are in.
    let unanswered = 0;
    let current: string[] | null = null;
    const where = target(to);
    const upstream = 'path' in where ? connect(where.path) : connect(where.port, where.host);
    const fromClient = messages((type, body) => {
      if (type === '') {
        // Startup: protocol version, then name/value pairs.
        const pairs = cstrings(body.subarray(4));
        const i = pairs.indexOf('application_name');
        if (i >= 0) conn.application = pairs[i + 1]!;
        return;
      }
      if (type === 'X' || type === 'p') return;
      if (current === null) conn.roundTrips.push((current = []));
      if (type === 'Q') current.push(cstrings(body)[0]!);
      // Parse names a statement's text ('' the unnamed one); Bind runs it, parsed now or before.
      if (type === 'P') {
        const [name, text] = cstrings(body);
        named.set(name!, text!);
      }
      if (type === 'B') current.push(named.get(cstrings(body)[1]!) ?? '(unknown statement)');
      if (type === 'Q' || type === 'S') unanswered++;
    }, true);
    const fromServer = messages((type) => {
      if (type !== 'Z' || unanswered === 0) return;
      if (--unanswered === 0) current = null;
    }, false);
    client.on('data', (chunk: Buffer) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer(chunk);
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, seen })));
}

describe.skipIf(pgSkip !== null)(`PostgreSQL pipelining${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  let db: { url: string; drop: () => Promise<void> };
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let server: RunningServer;
  let client: Anthropic;

  beforeAll(async () => {
    db = await createDatabase();
    proxy = await startProxy(db.url);
    server = await startServer({ databaseUrl: via(db.url, proxy.port) });
    client = sdkClient(server.url, server.adminKey);
  });
  afterAll(async () => {
    await server?.stop();
    await new Promise((r) => proxy?.server.close(r));
    await db?.drop();
  });

  /** Forgets the round trips so far (the migrations', the server's start). */
  function forget(): void {
    for (const c of proxy.seen) c.roundTrips.length = 0;
  }

  /** The round trips of the pooled connections (not the change listener's, not the read lane's) that sent a statement matching `re`. */
  function roundTripsWith(re: RegExp): string[] {
    return proxy.seen
      .filter((c) => c.application !== LISTENER_APPLICATION_NAME && c.application !== READ_LANE_APPLICATION_NAME)
      .flatMap((c) => c.roundTrips)
      .filter((statements) => statements.some((s) => re.test(s)))
      .map((statements) => statements.join('; '));
  }

  it("sends an API write's BEGIN, savepoints, statement and COMMIT in one round trip, and an update's held append with its COMMIT", async () => {
    const store = await client.beta.memoryStores.create({ name: 'pipelined' });
    forget();
    const made = await client.beta.memoryStores.memories.create(store.id, { path: '/p/a.md', content: 'first' });
    // The create: one statement, with everything around it in the same round trip.
    const creates = roundTripsWith(/^SELECT mnemo_create_guarded\(/);
    expect(creates).toHaveLength(1);
    expect(creates[0]).toMatch(/^BEGIN; SAVEPOINT \w+; SAVEPOINT \w+; SELECT mnemo_create_guarded\(.*; RELEASE SAVEPOINT \w+; RELEASE SAVEPOINT \w+; COMMIT$/s);
    await client.beta.memoryStores.memories.update(made.id, { memory_store_id: store.id, content: 'second' });
    // The update: BEGIN and savepoints with the probe, then the append (held) with the releases and COMMIT.
    const probes = roundTripsWith(/^SELECT \* FROM mnemo_write_probe\(/);
    expect(probes).toHaveLength(1);
    expect(probes[0]).toMatch(/^BEGIN; SAVEPOINT \w+; SAVEPOINT \w+; SELECT \* FROM mnemo_write_probe\(/s);
    const appends = roundTripsWith(/^SELECT mnemo_append\(/);
    expect(appends).toHaveLength(1);
    expect(appends[0]).toMatch(/^SELECT mnemo_append\(.*; RELEASE SAVEPOINT \w+; RELEASE SAVEPOINT \w+; COMMIT$/s);
    expect((await client.beta.memoryStores.memories.retrieve(made.id, { memory_store_id: store.id })).content).toBe('second');
  });

  it('prints no node-postgres deprecation warning while it writes', async () => {
    const store = await client.beta.memoryStores.create({ name: 'quiet' });
    const made = await Promise.all(['/q/a.md', '/q/b.md', '/q/c.md'].map((path) => client.beta.memoryStores.memories.create(store.id, { path, content: path })));
    for (const m of made) await client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: `${m.path} again` });
    expect(server.stderr()).not.toMatch(/DeprecationWarning|already executing a query/);
  });
});

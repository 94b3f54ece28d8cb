/**
 * Web console sign-ins across servers on one PostgreSQL database (issue 14): a session signed in
 * through one server is known to another (no sticky sessions behind a balancer), and signing out
 * through either ends it on both.
 */
import { describe, expect, it } from 'vitest';
import { openPostgresStorage } from '../../../src/storage/postgres/open.js';
import { inProcessApp, movableClock, type InProcessApp } from '../../helpers/in-process.js';
import { databasePerFile, pgSkip } from '../../helpers/postgres.js';

async function signIn(app: InProcessApp): Promise<string> {
  const res = await app.raw('POST', '/admin/sign-in', {
    apiKey: null, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ api_key: app.adminKey }).toString(),
  });
  expect(res.status).toBe(303);
  return `mnemo_console=${/mnemo_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]}`;
}

const page = (app: InProcessApp, cookie: string) => app.raw('GET', '/admin/stores', { apiKey: null, headers: { cookie } });

describe.skipIf(pgSkip !== null)(`console sessions on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const databaseUrl = databasePerFile();

  it('a sign-in through one server is known to another, and signing out through the other ends it on both', async () => {
    const clock = movableClock();
    const a = await inProcessApp({ clock, storage: await openPostgresStorage(databaseUrl(), { clock }) });
    const b = await inProcessApp({ clock, storage: await openPostgresStorage(databaseUrl(), { clock }) });
    const cookie = await signIn(a);
    expect((await page(b, cookie)).status).toBe(200);
    const form = await page(b, cookie);
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.body as string)?.[1];
    expect(csrf).toBeDefined();
    const out = await b.raw('POST', '/admin/sign-out', {
      apiKey: null, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: new URLSearchParams({ csrf: csrf! }).toString(),
    });
    expect(out.status).toBe(303);
    expect((await page(a, cookie)).status).toBe(303);
    expect((await page(b, cookie)).status).toBe(303);
  });
});

/**
 * The change feed's followers hear this server's own API writes once they have committed, with no
 * poll (issue 15 item 4, on PostgreSQL). The API's writes commit in groups; the operations' wake-up
 * fires inside the group's transaction, where a follower reading on another pooled connection finds
 * nothing yet. The timers here never fire, so an event arrives only if the group's after-commit
 * wake-up reached the follower.
 */
import { describe, expect, it } from 'vitest';
import type { Every } from '../../../src/service/feed.js';
import { openPostgresStorage } from '../../../src/storage/postgres/open.js';
import { inProcessApp, movableClock } from '../../helpers/in-process.js';
import { databasePerFile, pgSkip } from '../../helpers/postgres.js';
import { openEvents } from '../../helpers/sse.js';

/** Timers that never run: no poll, no heartbeat. */
const never: Every = () => () => {};

describe.skipIf(pgSkip !== null)(`change feed wake-ups on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const databaseUrl = databasePerFile();

  it('a follower hears each of this server’s API writes once it has committed, without polling', async () => {
    const clock = movableClock();
    const storage = await openPostgresStorage(databaseUrl(), { clock });
    const app = await inProcessApp({ clock, feedEvery: never, storage });
    const store = await app.client.beta.memoryStores.create({ name: 'wake' });
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': app.adminKey }, app.fetch);
    try {
      for (const path of ['/a.md', '/b.md', '/c.md']) {
        await app.client.beta.memoryStores.memories.create(store.id, { path, content: `content of ${path}` });
        expect(JSON.parse((await stream.next()).data).memory_version.path).toBe(path);
      }
    } finally {
      await stream.close();
    }
  });
});

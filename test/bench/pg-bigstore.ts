/**
 * @module Seeds the bench's large store on PostgreSQL in bulk: the same store as bigstore.ts
 * (`memories` memories in directories of 1,000, versions interleaved round-robin within groups,
 * the same text), written with multi-row INSERTs from arrays (`unnest`) straight into the schema,
 * one transaction per batch. Bench-only: the service's per-write path would take tens of minutes
 * for 1,000,000 versions.
 *
 * Every invariant the schema states holds at each commit: version rows are inserted, never
 * changed; each memory row is its newest version (id, content, sha256, size); `path_seq` numbers
 * a path's versions 1, 2, 3… in commit order (a memory's path never changes here); the usage row
 * follows the memories' own triggers. One trigger is set aside inside each batch's transaction:
 * `versions_commit_order` compares each row with the store's counter, which a single statement of
 * many rows cannot move between rows. The batch numbers its rows from the counter on, consecutively,
 * moves the counter to the last one, and turns the trigger back on before it commits (DDL is
 * transactional: no other session ever sees it off), exactly as migration 2 numbered the versions
 * that existed before it.
 */
import pg from 'pg';
import { byteLength, sha256Hex } from '../../src/domain/content.js';
import type { Caller } from '../../src/domain/types.js';
import { createService } from '../../src/service/service.js';
import { openPostgresStorage } from '../../src/storage/postgres/open.js';
import { actorColumns } from '../../src/storage/postgres/rows.js';
import { pathOf, type BigStore } from './bigstore.js';
import { fmt } from './report.js';

/** Versions per transaction (and per INSERT). */
const BATCH = 10_000;

const text = (i: number, round: number) => `# note ${i}\nround ${round}: the agent learned fact ${(i * 7919 + round) % 100_003} about project ${i % 211}.\n`;

export interface PgBigStore extends BigStore {
  /** Of `seconds`, the VACUUM ANALYZE at the end (what autovacuum would have done for a store grown over time). */
  analyzeSeconds: number;
}

export async function seedPgBigStore(url: string, memories: number, versions: number, log: (s: string) => void): Promise<PgBigStore> {
  const started = performance.now();
  // The workspace, an admin key and the store through the service, as on SQLite (engine.ts).
  const storage = await openPostgresStorage(url);
  const service = createService({ storage });
  let storeId: string;
  let caller: Caller;
  try {
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey('bench-loader', 'admin', ws.id);
    caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
    storeId = (await service.createStore(caller, { name: 'bench big', description: 'seeded by npm run bench', metadata: {} })).id;
  } finally {
    await storage.close();
  }
  const actor = actorColumns(caller.actor);
  const memoryIds = Array.from({ length: memories }, () => service.ids('memory'));
  const perMemory = Math.max(1, Math.round(versions / memories));
  const group = Math.max(1, Math.floor(BATCH / perMemory));
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let first = 0; first < memories; first += group) {
      const last = Math.min(memories, first + group);
      const now = service.clock();
      const v = { id: [] as string[], memory: [] as string[], op: [] as string[], path: [] as string[], content: [] as string[], sha: [] as string[], size: [] as number[], commit: [] as number[], pathSeq: [] as number[] };
      const heads = new Map<number, { versionId: string; content: string; sha: string; size: number }>();
      for (let round = 0; round < perMemory; round++) {
        for (let i = first; i < last; i++) {
          const content = text(i, round);
          const sha = sha256Hex(content);
          const size = byteLength(content);
          const versionId = service.ids('version');
          v.id.push(versionId);
          v.memory.push(memoryIds[i]!);
          v.op.push(round === 0 ? 'created' : 'modified');
          v.path.push(pathOf(i));
          v.content.push(content);
          v.sha.push(sha);
          v.size.push(size);
          v.commit.push(v.id.length);
          v.pathSeq.push(round + 1);
          heads.set(i, { versionId, content, sha, size });
        }
      }
      const m = { id: [] as string[], path: [] as string[], content: [] as string[], sha: [] as string[], size: [] as number[], version: [] as string[] };
      for (const [i, h] of heads) {
        m.id.push(memoryIds[i]!);
        m.path.push(pathOf(i));
        m.content.push(h.content);
        m.sha.push(h.sha);
        m.size.push(h.size);
        m.version.push(h.versionId);
      }
      await c.query('BEGIN');
      try {
        // The store row locked first, as every write does (memories.ts lockStore).
        const s = await c.query<{ commit_seq: number }>('SELECT commit_seq FROM stores WHERE id = $1 FOR NO KEY UPDATE', [storeId]);
        const base = Number(s.rows[0]!.commit_seq);
        await c.query('ALTER TABLE versions DISABLE TRIGGER versions_commit_order');
        // Each text once in `contents` (postgres/schema/v5.ts), before the versions that name it,
        // in the trigram index already (v12.ts), as in a store grown over time: queued, a million
        // texts kept the search upkeep marking them through every measurement of the large store.
        await c.query(
          `INSERT INTO contents (sha256, content, trigrams_ready) SELECT DISTINCT ON (sha) sha, content, true FROM unnest($1::text[], $2::text[]) AS t(sha, content)
           ON CONFLICT (sha256) DO NOTHING`,
          [v.sha, v.content],
        );
        await c.query(
          `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
           SELECT id, $1, memory_id, op, path, sha, size, $2, $3, $4, $5::bigint + commit_seq, path_seq
           FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], $12::bigint[], $13::bigint[])
             AS t(id, memory_id, op, path, sha, size, commit_seq, path_seq)`,
          [storeId, now, actor.type, actor.id, base, v.id, v.memory, v.op, v.path, v.sha, v.size, v.commit, v.pathSeq],
        );
        const top = base + v.id.length;
        await c.query('UPDATE stores SET commit_seq = $1 WHERE id = $2', [top, storeId]);
        await c.query('ALTER TABLE versions ENABLE TRIGGER versions_commit_order');
        await c.query(
          // The row names its text by sha and keeps its words (postgres/schema/v9.ts).
          `INSERT INTO memories (id, store_id, path, search, content_sha256, content_size_bytes, version_id, created_at, updated_at)
           SELECT id, $1, path, mnemo_search(path, content), sha, size, version_id, $2, $2
           FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[]) AS t(id, path, content, sha, size, version_id)`,
          [storeId, now, m.id, m.path, m.content, m.sha, m.size, m.version],
        );
        await c.query('COMMIT');
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      }
      if (Math.floor(last / 10_000) > Math.floor(first / 10_000)) log(`  pg big store: ${fmt(last)} memories, ${fmt(last * perMemory)} versions`);
    }
    const analyzing = performance.now();
    await c.query('VACUUM ANALYZE');
    const analyzeSeconds = (performance.now() - analyzing) / 1000;
    return { storeId, memoryIds, seconds: (performance.now() - started) / 1000, analyzeSeconds };
  } finally {
    await c.end();
  }
}

/**
 * @module The response shapes of api/wire.ts and api/wire-continuity.ts as zod schemas, for the
 * OpenAPI document only (responses are built by the wire functions, not parsed). The openapi test
 * parses real responses with these, so a wire change that is not mirrored here fails it.
 */
import { z } from 'zod';
import { ERROR_CODES } from '../../src/index.js';
import { HTTP_ERRORS } from '../errors.js';

const timestamp = z.string().meta({ format: 'date-time', description: 'RFC 3339, UTC' });
const nullableTimestamp = timestamp.nullable();

export const Actor = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('api_actor'), api_key_id: z.string() }),
    z.strictObject({ type: z.literal('session_actor'), session_id: z.string() }),
  ])
  .meta({ id: 'Actor' });

export const MemoryStore = z
  .strictObject({
    type: z.literal('memory_store'),
    id: z.string(),
    name: z.string(),
    description: z.string(),
    metadata: z.record(z.string(), z.string()),
    created_at: timestamp,
    updated_at: timestamp,
    archived_at: nullableTimestamp,
    retention: z
      .strictObject({ max_age_days: z.int().nullable(), keep_last: z.int().nullable() })
      .optional()
      .meta({ description: 'mnemo extension: present when the store prunes old versions (see the README, Retention)' }),
    forked_from: z
      .strictObject({ memory_store_id: z.string(), as_of: timestamp })
      .optional()
      .meta({ description: 'mnemo extension: present on a fork, naming the store and instant it was forked from (see the README, Forks)' }),
  })
  .meta({ id: 'MemoryStore' });

export const Memory = z
  .strictObject({
    type: z.literal('memory'),
    id: z.string(),
    memory_store_id: z.string(),
    path: z.string(),
    content: z.string().nullable().meta({ description: 'null unless view=full' }),
    content_sha256: z.string(),
    content_size_bytes: z.int(),
    memory_version_id: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
    expires_at: timestamp.optional().meta({ description: "mnemo's TTL extension: present only on memories that expire" }),
  })
  .meta({ id: 'Memory' });

export const MemoryPrefix = z.strictObject({ type: z.literal('memory_prefix'), path: z.string() }).meta({ id: 'MemoryPrefix' });

export const MemoryVersion = z
  .strictObject({
    type: z.literal('memory_version'),
    id: z.string(),
    memory_store_id: z.string(),
    memory_id: z.string(),
    operation: z.enum(['created', 'modified', 'deleted']),
    path: z.string().nullable(),
    content: z.string().nullable(),
    content_sha256: z.string().nullable(),
    content_size_bytes: z.int().nullable(),
    created_at: timestamp,
    created_by: Actor,
    redacted_at: nullableTimestamp,
    redacted_by: Actor.nullable(),
    content_still_held_by: z
      .int()
      .optional()
      .meta({ description: "mnemo extension, on a redaction's answer only (not on its replay): other unredacted versions in the workspace (not in a fork still being built) that still hold the same text, whose bytes therefore stay (0: none in this workspace does; another workspace, or a deleted store not yet purged, may still hold the same text, and its bytes stay until none does)" }),
    content_still_held_in: z
      .strictObject({
        data: z.array(
          z.strictObject({
            id: z.string(),
            memory_store_id: z.string(),
            memory_id: z.string(),
            path: z.string().nullable(),
            created_at: timestamp,
            current: z.boolean().meta({ description: "the current version of a live memory: it cannot be redacted until the memory changes or is deleted" }),
          }),
        ),
        has_more: z.boolean(),
      })
      .optional()
      .meta({
        description:
          "mnemo extension, on a redaction's first answer only (not on a replay): the first 100 of those versions, newest first, in the stores the key may see; has_more when more hold it",
      }),
  })
  .meta({ id: 'MemoryVersion' });

export const MemoryVersionChange = z
  .strictObject({
    cursor: z.string().meta({ description: 'opaque; pass it back as `after` (or Last-Event-ID) to resume after this version' }),
    memory_version: MemoryVersion,
  })
  .meta({ id: 'MemoryVersionChange' });

export const MemoryVersionPrunedChange = z
  .strictObject({
    cursor: z.string(),
    memory_version_pruned: z.strictObject({
      type: z.literal('memory_version_pruned'),
      memory_version_id: z.string(),
      memory_id: z.string(),
      memory_store_id: z.string(),
      pruned_at: timestamp,
    }),
  })
  .meta({ id: 'MemoryVersionPrunedChange', description: 'a version the store\'s retention pruned, recorded at its own place in the feed' });

export const ChangePage = z
  .strictObject({
    data: z.array(z.union([MemoryVersionChange, MemoryVersionPrunedChange])),
    next_after: z.string().meta({ description: 'never null: the last cursor of this page, or the `after` given when it is empty' }),
  })
  .meta({ id: 'ChangePage' });

export const MemoryVersionDiff = z
  .strictObject({
    type: z.literal('memory_version_diff'),
    from: MemoryVersion.nullable().meta({ description: 'null: empty content (the against of a memory\'s first version)' }),
    to: MemoryVersion,
    unified: z.string().meta({ description: 'a unified diff (--- from path, +++ to path, hunks)' }),
    minimal: z.boolean().meta({
      description:
        'false: the versions differ in too many places for the smallest diff to be found within the server\'s time budget; `unified` then replaces every line between their common first and last lines (still a diff that applies)',
    }),
  })
  .meta({ id: 'MemoryVersionDiff' });

export const Session = z
  .strictObject({
    type: z.literal('session'),
    id: z.string(),
    status: z.enum(['active', 'ended']),
    resources: z.array(
      z.strictObject({
        type: z.literal('memory_store'),
        memory_store_id: z.string(),
        access: z.enum(['read_write', 'read_only']),
        instructions: z.string().nullable(),
        name: z.string(),
        description: z.string(),
        mount_path: z.string(),
        host_path: z.string(),
        as_of: nullableTimestamp.describe('A point-in-time mount: the store as it was at this instant, read-only. null: the live store.'),
      }),
    ),
    system_prompt: z.string(),
    created_at: timestamp,
    ended_at: nullableTimestamp,
    node_id: z.string().nullable().meta({ description: 'the node (MNEMO_NODE_ID) whose server mounts the session; null: from before node ids' }),
    created_by: Actor.nullable().meta({
      description: 'the API key that created the session (revoking it ends the session); null: a session of `mnemo mount`, or from before creators were recorded',
    }),
  })
  .meta({ id: 'Session' });

export const ApiKey = z
  .strictObject({
    type: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    role: z.enum(['admin', 'read_write', 'read_only']),
    workspace_id: z.string(),
    memory_store_ids: z.array(z.string()).nullable(),
    all_workspaces: z.boolean(),
    created_at: timestamp,
    revoked_at: nullableTimestamp,
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyWithSecret = ApiKey.extend({ secret: z.string().meta({ description: 'shown once, on creation' }) }).meta({
  id: 'ApiKeyWithSecret',
});

export const AdminAction = z
  .strictObject({
    type: z.literal('admin_action'),
    id: z.string(),
    action: z.enum(['api_key.created', 'api_key.revoked', 'memory_version.redacted', 'memory_store.archived', 'memory_store.deleted', 'session.ended']),
    actor: Actor,
    target_id: z.string().meta({ description: 'the key, version, store or session acted on' }),
    memory_store_id: z.string().nullable(),
    summary: z.string().meta({ description: "a short description (a key's name and role, a store's name); never memory content" }),
    created_at: timestamp,
  })
  .meta({ id: 'AdminAction' });

export const Workspace = z
  .strictObject({ type: z.literal('workspace'), id: z.string(), name: z.string(), created_at: timestamp })
  .meta({ id: 'Workspace' });

const reference = {
  memory_id: z.string().nullable(),
  path: z.string().nullable(),
  content_sha256: z.string().nullable(),
  memory_version_id: z.string().nullable(),
  note: z.string().nullable(),
};

export const Checkpoint = z
  .strictObject({
    type: z.literal('checkpoint'),
    id: z.string(),
    memory_store_id: z.string(),
    agent_id: z.string(),
    session_id: z.string(),
    revision: z.int(),
    locator: z.string(),
    is_latest: z.boolean(),
    goal: z.string(),
    summary: z.string(),
    constraints: z.array(z.string()),
    decisions: z.array(z.string()),
    open_tasks: z.array(z.string()),
    next_action: z.string().nullable(),
    capsule: z.string(),
    references: z.array(z.strictObject(reference)),
    size_bytes: z.int(),
    created_at: timestamp,
    created_by: Actor,
  })
  .meta({ id: 'Checkpoint' });

export const CheckpointRestore = z
  .strictObject({
    type: z.literal('checkpoint_restore'),
    checkpoint_id: z.string(),
    agent_id: z.string(),
    session_id: z.string(),
    revision: z.int(),
    locator: z.string(),
    created_at: timestamp,
    goal: z.string(),
    capsule: z.string(),
    constraints: z.array(z.string()),
    decisions: z.array(z.string()),
    open_tasks: z.array(z.string()),
    next_action: z.string().nullable(),
    references: z.array(
      z.strictObject({
        ...reference,
        status: z.enum(['ok', 'changed', 'missing', 'expired']),
        current: z
          .strictObject({ memory_id: z.string(), path: z.string(), content_sha256: z.string(), memory_version_id: z.string() })
          .nullable(),
      }),
    ),
    summary: z.string().nullable(),
    omitted: z.array(z.string()).meta({ description: 'fields left out to fit max_bytes' }),
    size_bytes: z.int(),
    max_bytes: z.int(),
  })
  .meta({ id: 'CheckpointRestore' });

export const SearchResult = z
  .strictObject({ type: z.literal('search_result'), memory: Memory, snippet: z.string(), score: z.number() })
  .meta({ id: 'SearchResult' });

/** A search page: a page of results that also says whether the matches were ranked in capped windows. */
export const SearchResultPage = z
  .strictObject({
    data: z.array(SearchResult),
    next_page: z.string().nullable(),
    candidates_capped: z.boolean().meta({
      description: 'true when this search has more matches than one request ranks (fts: windows of 1,000; substring: a scan budget); page on with next_page',
    }),
  })
  .meta({ id: 'SearchResultPage' });

/** A page of `item`s: `next_page` is the cursor for `page`, null on the last page. */
export function pageOf(item: z.ZodType, id: string) {
  return z.strictObject({ data: z.array(item), next_page: z.string().nullable() }).meta({ id });
}

export function deleted(type: string, id: string) {
  return z.strictObject({ id: z.string(), type: z.literal(type) }).meta({ id });
}

export const ErrorEnvelope = z
  .strictObject({
    type: z.literal('error'),
    error: z.looseObject({
      type: z.enum([...new Set(ERROR_CODES.map((code) => HTTP_ERRORS[code].type))] as [string, ...string[]]),
      message: z.string(),
      conflicting_path: z.string().optional().meta({ description: 'memory_path_conflict_error only' }),
      conflicting_memory_id: z.string().optional().meta({ description: 'memory_path_conflict_error only' }),
      needed_bytes: z.int().optional().meta({ description: 'a restore budget below the essentials only' }),
      abandoned_by: z.enum(['redaction', 'sweep']).optional().meta({ description: 'a fork\'s conflict_error only: what deleted its build while it ran' }),
    }),
    request_id: z.string(),
  })
  .meta({ id: 'Error' });

/**
 * @module Every input rule, split by input: request bodies, query strings, headers, store fields,
 * memory inputs and checkpoints. Each refusal of bad input goes through one `fail()` (or names its
 * own code: invalid_path, invalid_utf8, content_too_large, name_too_long).
 *
 * Each rule is checked once per request, where its input enters the core:
 *
 * - At parsing, for what only the wire carries (the API's routes and the MCP tools share these
 *   parsers, and `mnemo keys create` / `workspaces create` run the key and workspace ones on their
 *   flags; a mount never sees them): the body is a JSON object whose fields are known, typed and
 *   present (bodies.ts, object.ts); query strings (queries.ts); headers (headers.ts); store, key
 *   and workspace names, descriptions and metadata pairs (store.ts); session resources; checkpoint
 *   bundles and restore budgets (checkpoint.ts: the service's checkpoints.parse applies this
 *   server's bundle cap); ttl_seconds and the form of expires_at; a precondition's sha256.
 * - In the service, for what every face sends: a memory's path and content. A body that
 *   parseMemoryCreate or parseMemoryUpdate parsed was checked there, in the order the API has
 *   always used (the body's shape, then its fields), and comes out marked and frozen (`checked`); the service's
 *   assertMemoryInput checks only what is not marked: a mount's save or a direct call. A mount's
 *   renames and saves (moveMemory, moveTree, saveMemoryAt) have no parser, so the service checks
 *   those paths. Also in the service: an expires_at in the future (resolveExpiry: it needs the
 *   clock), the attributes a mount keeps (assertAttrs), a tree move into itself, store room,
 *   roles and grants.
 * - Storage checks only what it alone can see: the metadata count once a patch meets the stored
 *   pairs, and the paths a tree move derives.
 *
 * Two checks happen earlier on purpose, and are not the rule's home: a mount checks a new entry's
 * name and path when it is created, made or renamed (fs/, so the refusal is an errno before any
 * local state changes, for files that may never reach the service), and decodeUtf8 checks a
 * mount's bytes (size before decoding, then UTF-8) before they become the text the service takes.
 */
export { fail } from './fail.js';
export { CONTINUITY_LIMITS, LIMITS } from './limits.js';
export { assertWellFormed, charCount } from './text.js';
export { assertPast, parseTimestamp } from './timestamps.js';
export {
  MAX_PATH_BYTES,
  MAX_SEGMENTS,
  NAME_MAX,
  assertContent,
  assertContentSize,
  assertEntryName,
  assertAttrs,
  assertMemoryInput,
  assertMemoryPath,
  HISTORY_ROOT,
  assertPathPrefix,
  checked,
  decodeUtf8,
  parseExpiry,
  parseMemoryEdit,
  parseSha256,
  resolveExpiry,
} from './memory.js';
export { assertDescription, assertLabel, assertMetadata, assertMetadataCount, assertStoreName } from './store.js';
export { parseBool, parseLimit, parseMemoryListQuery, parsePageQuery, parseSearchQuery, parseStoreListQuery, parseVersionListQuery, parseView } from './queries.js';
export type { Query } from './queries.js';
export { CHANGES_LIMITS, parseChangesQuery, parseDiffQuery } from './history.js';
export type { ChangesQuery } from './history.js';
export { IDEMPOTENCY_KEY_MAX_BYTES, assertIdentityCoding, decodeHeader, parseIdempotencyKey } from './headers.js';
export {
  CHECKPOINT_FIELDS,
  CHECKPOINT_REFERENCE,
  assertScopeId,
  checkpointSchema,
  parseCheckpointCreate,
  parseRestore,
  restoreSchema,
} from './checkpoint.js';
export type { CheckpointRequest } from './checkpoint.js';
export {
  REQUEST_BODY_SCHEMAS,
  keyCreateSchema,
  memoryCreateSchema,
  memoryUpdateSchema,
  parseEmptyBody,
  parseKeyCreate,
  parseMemoryCreate,
  parseMemoryUpdate,
  parseSessionCreate,
  parseStoreCreate,
  parseStoreFork,
  parseStoreUpdate,
  parseWorkspaceCreate,
  sessionCreateSchema,
  storeCreateSchema,
  storeForkSchema,
  storeUpdateSchema,
  workspaceCreateSchema,
} from './bodies.js';
export type { ForkRequest, SessionRequest } from './bodies.js';

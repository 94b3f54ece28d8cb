/**
 * @module Every input rule, split by input: request bodies, query strings, headers, store fields,
 * memory inputs and checkpoints. Each refusal of bad input goes through one `fail()` (or names its
 * own code: invalid_path, invalid_utf8, content_too_large, name_too_long).
 *
 * Each rule is checked once, where its input enters the core:
 *
 * - At parsing, for what arrives on the wire (the API's routes and the MCP tools share these
 *   parsers): the body is a JSON object, its fields are known, typed and present
 *   (bodies.ts, object.ts); query strings (queries.ts); headers (headers.ts); store, key and
 *   workspace names, descriptions and metadata pairs (store.ts); session resources; checkpoint
 *   bundles and restore budgets (checkpoint.ts; the service's checkpoints.parse applies this
 *   server's bundle cap); ttl_seconds and the form of expires_at; a precondition's sha256.
 * - Memory paths and content are checked at parsing too, and every face has that parse step:
 *   the API and MCP through parseMemoryCreate/parseMemoryUpdate, a mount when a name enters it
 *   (fs/ checks a new entry's path with assertEntryName and assertMemoryPath at create, mkdir and
 *   rename, so the refusal arrives as an errno up front) and when bytes become text (decodeUtf8
 *   checks size and UTF-8). The service takes these values as checked and does not re-check them.
 * - In the service, for what needs the stored state, the clock or the caller, whichever face
 *   asks: an expires_at in the future (resolveExpiry), the attributes a mount keeps
 *   (assertAttrs: only mounts send them), a tree move into itself, store room, roles and
 *   grants. Storage checks only what it alone can see: the metadata count once a patch meets the
 *   stored pairs, and the paths a tree move derives.
 *
 * Where rules run in sequence, their order decides which message a request with several problems
 * gets: the parsers keep the order the API has always had (shape, then fields in body order).
 */
export { fail } from './fail.js';
export { CONTINUITY_LIMITS, LIMITS } from './limits.js';
export { assertWellFormed, charCount } from './text.js';
export { parseTimestamp } from './timestamps.js';
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
  assertPathPrefix,
  checked,
  decodeUtf8,
  parseExpiry,
  parseSha256,
  resolveExpiry,
} from './memory.js';
export { assertDescription, assertLabel, assertMetadata, assertMetadataCount, assertStoreName } from './store.js';
export { parseBool, parseLimit, parseMemoryListQuery, parseSearchQuery, parseStoreListQuery, parseVersionListQuery, parseView } from './queries.js';
export type { Query } from './queries.js';
export { IDEMPOTENCY_KEY_MAX_BYTES, parseIdempotencyKey } from './headers.js';
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
  parseKeyCreate,
  parseMemoryCreate,
  parseMemoryUpdate,
  parseSessionCreate,
  parseStoreCreate,
  parseStoreUpdate,
  parseWorkspaceCreate,
  sessionCreateSchema,
  storeCreateSchema,
  storeUpdateSchema,
  workspaceCreateSchema,
} from './bodies.js';
export type { SessionRequest } from './bodies.js';

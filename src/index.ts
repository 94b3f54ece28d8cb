/** @module The core's public surface for the faces (api/, fs/): explicit named exports only. */
export { ERROR_CODES, MnemoError, isMnemoError, notFound } from './errors.js';
export type { ErrorCode, ErrorDetails } from './errors.js';
export { ID_PREFIXES, newId, randomToken } from './ids.js';
export type { IdGenerator, IdKind } from './ids.js';
export { MAX_CONTENT_BYTES, byteLength, sha256Hex } from './content.js';
export { ancestors, baseName, joinPath, parentOf, segments, slugify } from './paths.js';
export {
  CHECKPOINT_FIELDS,
  CHECKPOINT_REFERENCE,
  CONTINUITY_LIMITS,
  LIMITS,
  MAX_PATH_BYTES,
  MAX_SEGMENTS,
  NAME_MAX,
  REQUEST_BODY_SCHEMAS,
  assertEntryName,
  assertMemoryPath,
  assertScopeId,
  decodeUtf8,
  parseIdempotencyKey,
  parseKeyCreate,
  parseWorkspaceCreate,
  parseLimit,
  parseMemoryCreate,
  parseMemoryListQuery,
  parseMemoryUpdate,
  parseRestore,
  parseSearchQuery,
  parseSessionCreate,
  parseSha256,
  parseStoreCreate,
  parseStoreListQuery,
  parseStoreUpdate,
  parseVersionListQuery,
  parseView,
} from './validate/index.js';
export type { CheckpointRequest, Query, SessionRequest } from './validate/index.js';
export { createService } from './service.js';
export { checkpointLocator, parseLocator } from './checkpoints.js';
export type { Checkpoints, Restored, RestoredReference, RestoreTarget } from './checkpoints.js';
export type { Service, ServiceOptions } from './service.js';
export type { ServiceObserver } from './service.js';
export { checkReadiness } from './readiness.js';
export type { Readiness } from './readiness.js';
export { createKeys, hashSecret } from './keys.js';
export type { Keys, KeyScope, MintedKey } from './keys.js';
export { DEFAULT_IDEMPOTENCY_TTL_SECONDS, createIdempotency, fingerprint } from './idempotency.js';
export type { Idempotency, IdempotentRequest, Reply } from './idempotency.js';
export { assertAllowed } from './access.js';
export type { SessionHooks } from './sessions.js';
export { mountAccess } from './mounts.js';
export type { Mounter, MountAccess, MountReader, MountRequest, MountService } from './mounts.js';
export type { DirectoryListing, WriteResult } from './storage/port.js';
export type {
  Checkpoint,
  CheckpointReference,
  Expiry,
  ReferenceStatus,
  SearchHit,
  SearchPage,
  SearchQuery,
} from './types.js';
export type {
  Access,
  Actor,
  ApiKey,
  Caller,
  Face,
  Grant,
  KeptAttrs,
  Memory,
  MemoryListItem,
  MemoryListQuery,
  MemoryMeta,
  MemoryVersion,
  Operation,
  Page,
  Role,
  Session,
  SessionResource,
  Store,
  View,
  Workspace,
} from './types.js';
export { apiKeyJson, workspaceJson } from './key-wire.js';
export { packageVersion } from './version.js';

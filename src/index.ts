/** @module The core's public surface for the faces (api/, fs/): explicit named exports only. */
export { ERROR_CODES, MnemoError, excerpt, isMnemoError, notFound } from './domain/errors.js';
export type { ErrorCode, ErrorDetails } from './domain/errors.js';
export { ID_PREFIXES, newId, randomToken } from './service/ids.js';
export type { IdGenerator, IdKind } from './service/ids.js';
export { MAX_CONTENT_BYTES, byteLength, sha256Hex } from './domain/content.js';
export { seal, unseal } from './domain/sealed.js';
export type { MemoryEdit } from './domain/text-edits.js';
export { ancestors, baseName, joinPath, parentOf, segments, slugify } from './domain/paths.js';
export { DIFF_BUDGET_MS, MAX_EDITS, diffTextLines, toHunks } from './domain/line-diff.js';
export type { LineDiff, LineRun } from './domain/line-diff.js';
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
  HISTORY_ROOT,
  assertScopeId,
  assertIdentityCoding,
  decodeHeader,
  decodeUtf8,
  parseIdempotencyKey,
  parseEmptyBody,
  parseKeyCreate,
  parseWorkspaceCreate,
  parseLimit,
  parseMemoryCreate,
  parseMemoryEdit,
  parseMemoryListQuery,
  parseMemoryUpdate,
  parseRestore,
  parseSearchQuery,
  parseSessionCreate,
  parseSha256,
  parseStoreCreate,
  parseStoreFork,
  parsePageQuery,
  parseStoreListQuery,
  parseStoreUpdate,
  parseVersionListQuery,
  parseView,
  CHANGES_LIMITS,
  parseChangesQuery,
  parseDiffQuery,
} from './validate/index.js';
export type { CheckpointRequest, ForkRequest, Query, SessionRequest } from './validate/index.js';
export { createService } from './service/service.js';
export { FEED_POLL_MS, every } from './service/feed.js';
export type { Every, Feed } from './service/feed.js';
export { checkpointLocator, parseLocator } from './service/checkpoints.js';
export type { Checkpoints, Restored, RestoredReference, RestoreTarget } from './service/checkpoints.js';
export type { Service, ServiceOptions } from './service/service.js';
export type { ServiceObserver } from './service/service.js';
export { checkReadiness } from './service/readiness.js';
export type { Readiness } from './service/readiness.js';
export { createKeys, hashSecret } from './service/keys.js';
export type { Keys, KeyScope, MintedKey } from './service/keys.js';
export { DEFAULT_IDEMPOTENCY_TTL_SECONDS, createIdempotency, fingerprint } from './service/idempotency.js';
export type { IdempotentRequest, ReceiptHooks, Reply } from './service/idempotency.js';
export type { ServiceIdempotency as Idempotency } from './service/service.js';
export type { Operations } from './service/operations.js';
export { assertAllowed, grantOf } from './domain/access.js';
export { CONSOLE_IDLE_MS } from './service/console-sessions.js';
export type { ConsoleSession, ConsoleSessions } from './service/console-sessions.js';
export type { SessionHooks } from './service/sessions.js';
export { mountAccess } from './service/mounts.js';
export type { Mounter, MountAccess, MountReader, MountRequest, MountService } from './service/mounts.js';
export type { StoreRoom } from './service/limits.js';
export type { DirectoryListing, DirectoryNames, HistoryListing, MetaAsOf, PathVersion, WriteResult } from './storage/port.js';
export type {
  Checkpoint,
  CheckpointReference,
  Expiry,
  ReferenceStatus,
  SearchHit,
  SearchPage,
  SearchQuery,
  Change,
  ChangePage,
  VersionDiff,
} from './domain/types.js';
export type {
  Access,
  Actor,
  AdminAction,
  AdminActionKind,
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
  PageQuery,
  PrunedVersion,
  Role,
  Session,
  SessionResource,
  Store,
  TextHolder,
  TextHolders,
  View,
  Workspace,
} from './domain/types.js';
export { TEXT_HOLDERS_MAX } from './service/text-holders.js';
export { apiKeyJson, workspaceJson } from './cli/key-wire.js';
export { packageVersion } from './cli/version.js';
export { diskFull, isDiskFull } from './storage/common/disk-full.js';
export { databaseBusy, isDatabaseBusy } from './storage/common/database-busy.js';

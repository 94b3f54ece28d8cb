/** @module Every input limit by name: the rules check them, the OpenAPI document and MCP tools advertise them. */

export const LIMITS = {
  storeName: 255,
  storeDescription: 1024,
  metadataPairs: 16,
  metadataKey: 64,
  metadataValue: 512,
  listDefault: 20,
  listMax: 100,
  listMaxFull: 20,
  sessionResources: 8,
  instructions: 4096,
  keyStores: 100,
} as const;

export const CONTINUITY_LIMITS = {
  capsuleBytes: 16 * 1024,
  references: 64,
  /** Default and ceiling of the bundle size; MNEMO_CHECKPOINT_MAX_BYTES may set it lower. */
  bundleBytes: 1024 * 1024,
  listItems: 256,
  idChars: 128,
  restoreMin: 512,
  /**
   * The largest bundle plus 4 KiB for each of the 64 references it may hold: a restore adds to each
   * its status and the memory's `current` (id, hash, version id and a path of up to 1,024 bytes,
   * twice that as JSON when it is all quotes), about 2.3 KB at most, and once its own envelope,
   * which the rest pays for. So every bundle a save accepts restores at this ceiling, whatever
   * later happens to the memories it references (test/api/checkpoints.test.ts saves the worst).
   */
  restoreMax: 1024 * 1024 + 64 * 4096,
  restoreDefault: 32 * 1024,
  ttlMaxSeconds: 10 * 365 * 24 * 3600,
  queryChars: 1024,
} as const;

/** Bounds of a store's retention (issue 15): a century of days, a million versions per memory. */
export const RETENTION_LIMITS = { maxAgeDays: 36_500, keepLast: 1_000_000 } as const;

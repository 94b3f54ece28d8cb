/** @module Rules on a store's fields (name, description, metadata), and on key and workspace names, which read like store names. */
import { fail } from './fail.js';
import { LIMITS } from './limits.js';
import { assertWellFormed, charCount, CONTROL } from './text.js';

export function assertStoreName(name: string): string {
  return assertLabel(name, 'name');
}

/** Bidirectional-text controls: they make a name display as other text (U+202E shows "txt.exe" as "exe.txt"). */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** A store, key or workspace name: 1–255 characters, none of them a control or bidi control character. */
export function assertLabel(value: string, field: string): string {
  assertWellFormed(value, field);
  const n = charCount(value);
  if (n < 1 || n > LIMITS.storeName) fail(field, `must be 1 to ${LIMITS.storeName} characters (got ${n})`);
  if (CONTROL.test(value)) fail(field, 'must not contain control characters');
  const bidi = BIDI.exec(value);
  if (bidi) fail(field, `contains a forbidden character (U+${bidi[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}): bidirectional-text controls are refused`);
  return value;
}

export function assertDescription(description: string): string {
  assertWellFormed(description, 'description');
  const n = charCount(description);
  if (n > LIMITS.storeDescription) fail('description', `must be at most ${LIMITS.storeDescription} characters (got ${n})`);
  return description;
}

export function assertMetadataKey(key: string): void {
  assertWellFormed(key, 'metadata');
  const n = charCount(key);
  if (n < 1 || n > LIMITS.metadataKey) fail('metadata', `keys must be 1 to ${LIMITS.metadataKey} characters (got ${n})`);
}

export function assertMetadataValue(key: string, value: string): void {
  assertWellFormed(value, `metadata.${key}`);
  const n = charCount(value);
  if (n > LIMITS.metadataValue) fail(`metadata.${key}`, `values must be at most ${LIMITS.metadataValue} characters (got ${n})`);
}

export function assertMetadata(metadata: Record<string, string>): Record<string, string> {
  const entries = Object.entries(metadata);
  for (const [k, v] of entries) {
    assertMetadataKey(k);
    assertMetadataValue(k, v);
  }
  assertMetadataCount(entries.length);
  return metadata;
}

/** Also checked by storage on an update, where the count is known only once the patch meets the stored pairs. */
export function assertMetadataCount(count: number): void {
  if (count > LIMITS.metadataPairs) fail('metadata', `at most ${LIMITS.metadataPairs} pairs (got ${count})`);
}

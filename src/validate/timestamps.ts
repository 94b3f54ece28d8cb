/** @module RFC 3339 timestamps, from query strings (created_at filters) and bodies (expires_at). */
import { fail } from './fail.js';

/** An RFC 3339 timestamp, returned in the canonical form the store keeps (UTC, milliseconds). */
export function parseTimestamp(raw: string | undefined, field: string): string | null {
  if (raw === undefined) return null;
  const m = RFC3339.exec(raw);
  const ms = m && fieldsInRange(m) ? Date.parse(raw.replace(' ', 'T')) : NaN;
  if (Number.isNaN(ms)) fail(field, 'must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z');
  const canonical = new Date(ms).toISOString();
  // An offset can carry 9999-12-31 or 0000-01-01 past a four-digit UTC year (+010000-…, -000001-…),
  // a form that both engines would compare as text against every other timestamp the wrong way.
  if (!FOUR_DIGIT_YEAR.test(canonical)) fail(field, `must be from ${MIN_TIMESTAMP} to ${MAX_TIMESTAMP} in UTC`);
  return canonical;
}

const MIN_TIMESTAMP = '0000-01-01T00:00:00Z';
const MAX_TIMESTAMP = '9999-12-31T23:59:59.999Z';
const FOUR_DIGIT_YEAR = /^\d{4}-/;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** Date.parse rolls impossible dates over (2026-02-30 becomes March 2), so each field is checked. */
function fieldsInRange(m: RegExpExecArray): boolean {
  const [y, mo, d, h, mi, s, oh, om] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth && h <= 23 && mi <= 59 && s <= 59 && oh <= 23 && om <= 59;
}

/**
 * A point-in-time mount's instant must have passed: the mount keeps what it read for good, and the
 * store at a later instant is still being written. Both are canonical RFC 3339 (they compare as text).
 */
export function assertPast(at: string, now: string, field: string): string {
  if (at > now) fail(field, `must not be in the future (it is ${now} now)`);
  return at;
}

/**
 * @module The API keys a PostgreSQL-backed server found lately, by their secret's hash. Every
 * request authenticates by its key first, and on PostgreSQL that lookup is a round trip of its own
 * (half of a retrieve's two). A key changes only once, when it is revoked, and every revoke
 * announces itself (notify.ts `k`): each server, the revoking one included, forgets the key when it
 * hears that. A key is kept only while the listener listens, and never longer than `maxAgeMs`,
 * which bounds how long a revoke can go unheard when the listener's link died silently (its
 * heartbeat notices within 15 s) or a revoke was made outside mnemo (plain SQL).
 *
 * Only live keys are kept: an unknown hash and a revoked key are looked up every time, so a key
 * created on another server works on its first request, and a revoked one never comes back.
 */
import type { ApiKey } from '../../domain/types.js';

/** How long a found key is trusted without a lookup, in ms. */
export const KEY_CACHE_MS = 1000;

/** The most keys kept at once (a key's lookup is one round trip: the cache only has to hold the busy ones). */
export const MAX_KEPT = 1000;

export interface KeyCacheOptions {
  /** Whether revokes are heard now (the listener listens); when not, every find looks up. */
  hearing: () => boolean;
  /** Monotonic ms (injected by tests). */
  now?: () => number;
  maxAgeMs?: number;
}

export interface KeyCache {
  /** The key with this hash: kept, or `load`ed (and kept if live). */
  find(hash: string, load: () => Promise<ApiKey | null>): Promise<ApiKey | null>;
  /** The key with this id was revoked (here or on another server): it is looked up again. */
  forget(keyId: string): void;
  /** Revokes may have gone unheard (the listener reconnects): every key is looked up again. */
  clear(): void;
  /** How many keys are kept (tests). */
  size(): number;
  /** Moves at every forget and clear, and every `maxAgeMs` while revokes are not heard: the port's keyMark(). */
  mark(): number;
}

export function createKeyCache({ hearing, now = () => performance.now(), maxAgeMs = KEY_CACHE_MS }: KeyCacheOptions): KeyCache {
  const kept = new Map<string, { key: ApiKey; at: number }>();
  // Moves on every forget and clear: a lookup that began before one may have read the key as it
  // was before the revoke's commit, so what it found is returned but not kept.
  let generation = 0;
  // Moves while revokes are not heard, once per `maxAgeMs` (mark()).
  let unheard = 0;

  return {
    async find(hash, load) {
      const hit = kept.get(hash);
      if (hit && hearing() && now() - hit.at < maxAgeMs) return hit.key;
      if (hit) kept.delete(hash);
      const began = generation;
      const at = now();
      const key = await load();
      if (key && !key.revokedAt && began === generation && hearing()) {
        // An entry goes only when its hash is asked for again: without this, every key ever used
        // would stay. The kept keys are those of the last `maxAgeMs`, in the order they were found.
        if (kept.size >= MAX_KEPT) {
          for (const [h, e] of kept) if (at - e.at >= maxAgeMs) kept.delete(h);
          if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
        }
        kept.set(hash, { key, at });
      }
      return key;
    },
    forget(keyId) {
      generation += 1;
      for (const [hash, { key }] of kept) if (key.id === keyId) kept.delete(hash);
    },
    clear() {
      generation += 1;
      kept.clear();
    },
    size: () => kept.size,
    mark() {
      // Unheard revokes are looked for once per `maxAgeMs`, the age past which a kept key is read again.
      if (!hearing()) unheard = Math.max(unheard, Math.floor(now() / maxAgeMs) + 1);
      // Both counts only grow, so their sum moves whenever either does.
      return generation + unheard;
    },
  };
}

/**
 * @module Who may do what: the roles matrix and store grants. A missing right is 403 `forbidden`; a
 * store outside a key's grant is 404, exactly like a store of another workspace, so nothing leaks.
 *
 * | action            | read_only | read_write | admin |
 * | ----------------- | --------- | ---------- | ----- |
 * | read              | yes       | yes        | yes   |
 * | write             | no        | yes        | yes   |
 * | redact            | no        | no         | yes   |
 * | manage_keys       | no        | no         | yes   |
 * | read_audit        | no        | no         | yes   |
 */
import { MnemoError, notFound } from './errors.js';
import type { ApiKey, Caller, Grant, Role } from './types.js';

export type Action = 'read' | 'write' | 'redact' | 'manage_keys' | 'read_audit';

const ALLOWED: Record<Role, ReadonlySet<Action>> = {
  read_only: new Set(['read']),
  read_write: new Set(['read', 'write']),
  admin: new Set(['read', 'write', 'redact', 'manage_keys', 'read_audit']),
};

const NEEDS: Record<Action, string> = {
  read: 'read access',
  write: 'a read_write or admin key',
  redact: 'an admin key',
  manage_keys: 'an admin key',
  read_audit: 'an admin key',
};

/** What a key may do: its role, its stores, whether it acts on every workspace. */
export function grantOf(key: ApiKey): Grant {
  return { role: key.role, storeIds: key.storeIds, operator: key.allWorkspaces };
}

/** Throws 403 if the caller's role lacks `action`. Session actors (mounts) never redact or manage keys. */
export function assertAllowed(caller: Caller, action: Action): void {
  const why = refusal(caller, action);
  if (why !== null) throw new MnemoError('forbidden', why);
}

/** True when the caller may take `action` (`assertAllowed` would not refuse it). */
export function allowed(caller: Caller, action: Action): boolean {
  return refusal(caller, action) === null;
}

function refusal(caller: Caller, action: Action): string | null {
  if (caller.actor.type === 'session_actor' && (action === 'redact' || action === 'manage_keys' || action === 'read_audit')) {
    return action === 'redact' ? 'agents cannot redact memory versions' : 'agents cannot manage API keys';
  }
  const grant = caller.grant;
  if (grant && !ALLOWED[grant.role].has(action)) return `this API key is ${grant.role}; this request needs ${NEEDS[action]}`;
  return null;
}

/** True when the caller may see this store at all (its key is not limited to other stores). */
export function storeGranted(caller: Caller, storeId: string): boolean {
  const ids = caller.grant?.storeIds;
  return ids === undefined || ids === null || ids.includes(storeId);
}

/** Throws 404 for a store outside the caller's grant, the same answer as for a store that does not exist. */
export function assertStoreGranted(caller: Caller, storeId: string): void {
  if (!storeGranted(caller, storeId)) throw notFound('memory store', storeId);
}

/** The stores a listing may show: null for all of the workspace's. */
export function grantedStores(caller: Caller): readonly string[] | null {
  return caller.grant?.storeIds ?? null;
}

/** A key limited to some stores cannot create new ones (the new store would be outside its grant). */
export function assertMayCreateStores(caller: Caller): void {
  assertAllowed(caller, 'write');
  if (grantedStores(caller) !== null) {
    throw new MnemoError('forbidden', 'this API key is limited to specific memory stores and cannot create new ones');
  }
}

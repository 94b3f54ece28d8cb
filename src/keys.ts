/** @module API keys: secrets are shown once and stored only as sha256 hashes. */
import { createHash } from 'node:crypto';
import { MnemoError } from './errors.js';
import { newId, randomToken } from './ids.js';
import type { Storage } from './storage/port.js';
import type { ApiKey, Role, Workspace } from './types.js';

export const KEY_PREFIX = 'mnemo-sk-';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function newSecret(): string {
  return KEY_PREFIX + randomToken(40);
}

export interface MintedKey {
  key: ApiKey;
  /** The only time the secret exists outside the caller's hands. */
  secret: string;
}

export function createKeys(storage: Storage, clock: () => string) {
  function defaultWorkspace(): Workspace {
    const existing = storage.defaultWorkspace();
    if (existing) return existing;
    const ws: Workspace = { id: newId('workspace'), name: 'default', createdAt: clock() };
    storage.insertWorkspace(ws, true);
    return ws;
  }

  function mint(workspaceId: string, name: string, role: Role, secret = newSecret()): MintedKey {
    const key: ApiKey = { id: newId('apiKey'), workspaceId, name, role, createdAt: clock(), revokedAt: null };
    storage.insertApiKey(key, hashSecret(secret));
    return { key, secret };
  }

  return {
    defaultWorkspace,

    /**
     * Seeds the admin key of the default workspace. A given secret (MNEMO_ADMIN_KEY) is registered
     * if it is not known yet; with none, a key is generated only when no key exists at all.
     */
    bootstrapAdminKey(secret: string | null): MintedKey | null {
      const ws = defaultWorkspace();
      if (secret !== null) {
        if (storage.findApiKeyByHash(hashSecret(secret))) return null;
        return mint(ws.id, 'admin (MNEMO_ADMIN_KEY)', 'admin', secret);
      }
      if (storage.countApiKeys() > 0) return null;
      return mint(ws.id, 'admin (generated)', 'admin');
    },

    createKey(name: string, role: Role, workspaceId = defaultWorkspace().id): MintedKey {
      return mint(workspaceId, name, role);
    },

    authenticate(secret: string | null): ApiKey {
      if (!secret) throw new MnemoError('unauthenticated', 'missing API key: send x-api-key or Authorization: Bearer');
      const key = storage.findApiKeyByHash(hashSecret(secret));
      if (!key || key.revokedAt) throw new MnemoError('unauthenticated', 'invalid API key');
      return key;
    },
  };
}

export type Keys = ReturnType<typeof createKeys>;

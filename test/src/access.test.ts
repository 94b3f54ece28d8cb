/** The roles matrix and the rule that agents (session actors) never redact or manage keys. (issue 4) */
import { describe, expect, it } from 'vitest';
import { assertAllowed, type Action } from '../../src/domain/access.js';
import type { Caller, Role } from '../../src/domain/types.js';
import { codeOf, openCore } from '../helpers/core.js';

const api = (role: Role): Caller => ({ workspaceId: 'wrkspc_x', actor: { type: 'api_actor', apiKeyId: 'apikey_x' }, grant: { role, storeIds: null } });
const agent: Caller = { workspaceId: 'wrkspc_x', actor: { type: 'session_actor', sessionId: 'sesn_x' } };

const MATRIX: [Role, Action, boolean][] = [
  ['read_only', 'read', true],
  ['read_only', 'write', false],
  ['read_only', 'redact', false],
  ['read_only', 'manage_keys', false],
  ['read_write', 'read', true],
  ['read_write', 'write', true],
  ['read_write', 'redact', false],
  ['read_write', 'manage_keys', false],
  ['admin', 'read', true],
  ['admin', 'write', true],
  ['admin', 'redact', true],
  ['admin', 'manage_keys', true],
];

describe('roles', () => {
  it.each(MATRIX)('%s may %s: %s', (role, action, allowed) => {
    const call = () => assertAllowed(api(role), action);
    if (allowed) expect(call).not.toThrow();
    else expect(codeOf(call)).toBe('forbidden');
  });

  it('a session actor may read and write but never redact or manage keys', () => {
    expect(() => assertAllowed(agent, 'write')).not.toThrow();
    expect(codeOf(() => assertAllowed(agent, 'redact'))).toBe('forbidden');
    expect(codeOf(() => assertAllowed(agent, 'manage_keys'))).toBe('forbidden');
  });

  it('the service refuses a redaction by a session actor', async () => {
    const core = await openCore();
    const s = await core.service.createStore(core.caller, { name: 's', description: '', metadata: {} });
    const m = await core.service.createMemory(core.caller, s.id, { path: '/a.md', content: 'secret' });
    await core.service.updateMemory(core.caller, s.id, m.id, { content: 'gone' });
    const asAgent: Caller = { workspaceId: core.caller.workspaceId, actor: { type: 'session_actor', sessionId: 'sesn_x' } };
    expect(await codeOf(() => core.service.redactVersion(asAgent, s.id, m.versionId))).toBe('forbidden');
  });
});

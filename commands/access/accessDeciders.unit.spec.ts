import { describe, it } from 'vitest';
import type { AuthEvent } from '../../src/domain/auth.js';
import { IllegalStateError } from '../../src/errors.js';
import { checkDecider, type DeciderCase } from '../../test/support/givenWhenThen.js';
import { configDecider, type ChangeConfig } from '../settings/changeConfig.js';
import { apiKeyDecider, type ApiKeyCommand } from './createApiKey.js';

const keyId = '00000000-0000-4000-8000-0000000000a1';
const hash = 'f'.repeat(64);
const create: ApiKeyCommand = {
  kind: 'create',
  keyId,
  hash,
  scopes: ['search:read'],
  tenant: 'acme',
  label: 'ci',
};
const revoke: ApiKeyCommand = { kind: 'revoke', keyId };
const created: AuthEvent = {
  type: 'ApiKeyCreated',
  schemaVersion: 1,
  data: { keyId, hash, scopes: ['search:read'], tenant: 'acme', label: 'ci' },
};
const revoked: AuthEvent = { type: 'ApiKeyRevoked', schemaVersion: 1, data: { keyId } };

describe('API keys', () => {
  it.each<DeciderCase<ApiKeyCommand, AuthEvent> & { name: string }>([
    {
      name: 'a new key is created with its scopes, tenant and label',
      when: create,
      then: [
        { type: 'ApiKeyCreated', data: { keyId, scopes: ['search:read'], tenant: 'acme', label: 'ci' } },
      ],
    },
    { name: 'a key is never created twice', given: [created], when: create, throws: IllegalStateError },
    {
      name: 'a revoked key is not created again',
      given: [created, revoked],
      when: create,
      throws: 'already exists',
    },
    { name: 'an unknown key cannot be revoked', when: revoke, throws: `No API key ${keyId}` },
    {
      name: 'a key is revoked',
      given: [created],
      when: revoke,
      then: [{ type: 'ApiKeyRevoked', data: { keyId } }],
    },
    { name: 'revoking twice appends nothing', given: [created, revoked], when: revoke, then: [] },
  ])('$name', (c) => checkDecider(apiKeyDecider, c));
});

const change = (...changes: ChangeConfig['changes']): ChangeConfig => ({ changes, by: 'admin' });
const changed = (...changes: ChangeConfig['changes']): AuthEvent => ({
  type: 'ConfigChanged',
  schemaVersion: 1,
  data: { changes, by: 'admin' },
});

describe('runtime configuration', () => {
  it.each<DeciderCase<ChangeConfig, AuthEvent> & { name: string }>([
    {
      name: 'a first change is recorded with who made it',
      when: change({ path: 'search.default_limit', value: 20 }),
      then: [
        {
          type: 'ConfigChanged',
          data: { by: 'admin', changes: [{ path: 'search.default_limit', value: 20 }] },
        },
      ],
    },
    {
      name: 'setting the value it has records nothing',
      given: [changed({ path: 'search.default_limit', value: 20 })],
      when: change({ path: 'search.default_limit', value: 20 }),
      then: [],
    },
    {
      name: 'only the values that differ are recorded',
      given: [changed({ path: 'a.b', value: 1 })],
      when: change({ path: 'a.b', value: 1 }, { path: 'a.c', value: 2 }),
      then: [{ data: { changes: [{ path: 'a.c', value: 2 }] } }],
    },
    {
      name: 'a later value replaces an earlier one',
      given: [changed({ path: 'a.b', value: 1 }), changed({ path: 'a.b', value: 2 })],
      when: change({ path: 'a.b', value: 1 }),
      then: [{ data: { changes: [{ path: 'a.b', value: 1 }] } }],
    },
    {
      name: 'structured values compare by content',
      given: [changed({ path: 'a.list', value: ['x', 'y'] })],
      when: change({ path: 'a.list', value: ['x', 'y'] }),
      then: [],
    },
    {
      name: 'structured values that differ are recorded',
      given: [changed({ path: 'a.list', value: ['x'] })],
      when: change({ path: 'a.list', value: ['x', 'y'] }),
      then: [{ type: 'ConfigChanged' }],
    },
    { name: 'an empty change records nothing', when: change(), then: [] },
  ])('$name', (c) => checkDecider(configDecider, c));
});

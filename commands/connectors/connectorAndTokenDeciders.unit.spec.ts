import { describe, it } from 'vitest';
import type { AuthEvent } from '../../src/domain/auth.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { IllegalStateError, NotFoundError } from '../../src/errors.js';
import { checkDecider, unitContext, type DeciderCase } from '../../test/support/givenWhenThen.js';
import { connectorDecider, type ConnectorCommand } from './changeConnector.js';
import { refreshFamilyDecider, type RefreshCommand } from '../access/rotateRefreshToken.js';

type ConnectorEvent = Extract<
  DomainEvent,
  { type: 'ConnectorAdded' | 'ConnectorUpdated' | 'ConnectorRemoved' }
>;
const connectorId = '00000000-0000-4000-8000-0000000000c2';
/** The project the given events were written in (see `asStored`). */
const sameProject = unitContext({ project: 'test' });
const add: ConnectorCommand = {
  kind: 'add',
  connectorId,
  name: 'docs',
  type: 'filesystem',
  settings: { root: '/srv' },
};
const added: ConnectorEvent = {
  type: 'ConnectorAdded',
  schemaVersion: 1,
  data: { connectorId, name: 'docs', kind: 'filesystem', settings: { root: '/srv' } },
};
const removed: ConnectorEvent = { type: 'ConnectorRemoved', schemaVersion: 1, data: { connectorId } };

describe('adding, changing and removing a connector', () => {
  it.each<DeciderCase<ConnectorCommand, ConnectorEvent> & { name: string }>([
    {
      name: 'a new connector is added, its type as its kind',
      when: add,
      then: [{ type: 'ConnectorAdded', data: { connectorId, name: 'docs', kind: 'filesystem' } }],
    },
    { name: 'a connector is added once', given: [added], when: add, throws: IllegalStateError },
    {
      name: 'a connector is renamed',
      given: [added],
      when: { kind: 'update', connectorId, name: 'wiki' },
      context: sameProject,
      then: [{ type: 'ConnectorUpdated', data: { name: 'wiki' } }],
    },
    {
      name: 'its settings change',
      given: [added],
      when: { kind: 'update', connectorId, settings: { root: '/new' } },
      context: sameProject,
      then: [{ data: { settings: { root: '/new' } } }],
    },
    {
      name: 'an unknown connector cannot change',
      when: { kind: 'update', connectorId, name: 'x' },
      context: sameProject,
      throws: NotFoundError,
    },
    {
      name: "another project's connector is not found",
      given: [added],
      when: { kind: 'remove', connectorId },
      context: unitContext({ project: 'other' }),
      throws: `No connector with id ${connectorId}`,
    },
    {
      name: 'a connector is removed',
      given: [added],
      when: { kind: 'remove', connectorId },
      context: sameProject,
      then: [{ type: 'ConnectorRemoved', data: { connectorId } }],
    },
    {
      name: 'a removed connector cannot be removed again',
      given: [added, removed],
      when: { kind: 'remove', connectorId },
      context: sameProject,
      throws: NotFoundError,
    },
    {
      name: 'a removed connector cannot change',
      given: [added, removed],
      when: { kind: 'update', connectorId, name: 'x' },
      context: sameProject,
      throws: NotFoundError,
    },
  ])('$name', (c) => checkDecider(connectorDecider, c));
});

const familyId = '00000000-0000-4000-8000-0000000000f1';
const [first, second, third] = ['1', '2', '3'].map((c) => c.repeat(64)) as [string, string, string];
const later = '2026-02-01T00:00:00.000Z';
const issue: RefreshCommand = {
  kind: 'issue',
  familyId,
  tokenHash: first,
  subject: 'ann',
  tenant: 'acme',
  scopes: ['search:read'],
  expiresAt: later,
};
const issued: AuthEvent = {
  type: 'RefreshTokenIssued',
  schemaVersion: 1,
  data: {
    familyId,
    tokenHash: first,
    subject: 'ann',
    tenant: 'acme',
    scopes: ['search:read'],
    expiresAt: later,
  },
};
const rotated: AuthEvent = {
  type: 'RefreshTokenRotated',
  schemaVersion: 1,
  data: { familyId, previousHash: first, tokenHash: second, expiresAt: later },
};
const revoked: AuthEvent = {
  type: 'RefreshTokenFamilyRevoked',
  schemaVersion: 1,
  data: { familyId, reason: 'logout' },
};
const rotate = (presented: string): RefreshCommand => ({
  kind: 'rotate',
  familyId,
  presentedHash: presented,
  tokenHash: third,
  expiresAt: later,
});

describe('refresh token families', () => {
  it.each<DeciderCase<RefreshCommand, AuthEvent> & { name: string }>([
    {
      name: 'a family is issued',
      when: issue,
      then: [{ type: 'RefreshTokenIssued', data: { familyId, subject: 'ann', tokenHash: first } }],
    },
    { name: 'a family is issued once', given: [issued], when: issue, throws: IllegalStateError },
    {
      name: 'the current token rotates to a new one',
      given: [issued],
      when: rotate(first),
      then: [{ type: 'RefreshTokenRotated', data: { previousHash: first, tokenHash: third } }],
    },
    {
      name: 'a rotated token replayed revokes the family',
      given: [issued, rotated],
      when: rotate(first),
      then: [{ type: 'RefreshTokenFamilyRevoked', data: { reason: 'reuse of a rotated refresh token' } }],
    },
    {
      name: 'the token after a rotation rotates',
      given: [issued, rotated],
      when: rotate(second),
      then: [{ type: 'RefreshTokenRotated', data: { previousHash: second } }],
    },
    {
      name: 'an expired token does not rotate',
      given: [issued],
      when: rotate(first),
      context: unitContext({ now: '2026-03-01T00:00:00.000Z' }),
      then: [],
    },
    { name: 'a revoked family does not rotate', given: [issued, revoked], when: rotate(first), then: [] },
    { name: 'an unknown family does not rotate', when: rotate(first), then: [] },
    {
      name: 'a family is revoked with its reason',
      given: [issued],
      when: { kind: 'revoke', familyId, reason: 'logout' },
      then: [{ type: 'RefreshTokenFamilyRevoked', data: { reason: 'logout' } }],
    },
    {
      name: 'revoking twice appends nothing',
      given: [issued, revoked],
      when: { kind: 'revoke', familyId, reason: 'again' },
      then: [],
    },
    {
      name: 'an unknown family cannot be revoked',
      when: { kind: 'revoke', familyId, reason: 'x' },
      throws: NotFoundError,
    },
  ])('$name', (c) => checkDecider(refreshFamilyDecider, c));
});

import { describe, expect, it } from 'vitest';
import type { AuthEvent } from '../../src/domain/auth.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { commandContext } from '../../src/engine/commands.js';
import { refreshFamilyDecider, type RefreshCommand } from './rotateRefreshToken.js';

const familyId = '0b5e2a4c-1d2e-4f3a-8b9c-0d1e2f3a4b5c';
const hash = (c: string) => c.repeat(64);
const at = (now: string) => commandContext({ subject: 't', tenant: null, via: 'rest' }, { now });
const stored = (event: AuthEvent) => ({ ...event, metadata: {} }) as unknown as StoredEvent<AuthEvent>;

const given = (commands: RefreshCommand[], now = '2026-01-01T00:00:00.000Z') =>
  commands.reduce(
    (state, command) =>
      refreshFamilyDecider
        .decide(command, state, at(now))
        .reduce((s, e) => refreshFamilyDecider.evolve(s, stored(e)), state),
    refreshFamilyDecider.initialState(),
  );

const issue: RefreshCommand = {
  kind: 'issue',
  familyId,
  tokenHash: hash('a'),
  subject: 'bob',
  tenant: 'acme',
  scopes: ['search:read'],
  expiresAt: '2026-02-01T00:00:00.000Z',
};
const rotate = (presented: string, next: string): RefreshCommand => ({
  kind: 'rotate',
  familyId,
  presentedHash: hash(presented),
  tokenHash: hash(next),
  expiresAt: '2026-03-01T00:00:00.000Z',
});

describe('refresh token family', () => {
  it('rotates the current token into the next one', () => {
    const events = refreshFamilyDecider.decide(
      rotate('a', 'b'),
      given([issue]),
      at('2026-01-02T00:00:00.000Z'),
    );
    expect(events).toEqual([
      {
        type: 'RefreshTokenRotated',
        schemaVersion: 1,
        data: {
          familyId,
          previousHash: hash('a'),
          tokenHash: hash('b'),
          expiresAt: '2026-03-01T00:00:00.000Z',
        },
      },
    ]);
  });

  it('revokes the family when a rotated token comes back', () => {
    const events = refreshFamilyDecider.decide(
      rotate('a', 'c'),
      given([issue, rotate('a', 'b')]),
      at('2026-01-02T00:00:00.000Z'),
    );
    expect(events.map((e) => e.type)).toEqual(['RefreshTokenFamilyRevoked']);
  });

  it('does nothing for a revoked family, an expired token or an unknown family', () => {
    const revoked = given([issue, rotate('a', 'b'), rotate('a', 'c')]);
    expect(revoked.revoked).toBe(true);
    expect(refreshFamilyDecider.decide(rotate('b', 'd'), revoked, at('2026-01-02T00:00:00.000Z'))).toEqual(
      [],
    );
    expect(
      refreshFamilyDecider.decide(rotate('a', 'b'), given([issue]), at('2026-02-01T00:00:00.000Z')),
    ).toEqual([]);
    expect(
      refreshFamilyDecider.decide(
        rotate('a', 'b'),
        refreshFamilyDecider.initialState(),
        at('2026-01-02T00:00:00.000Z'),
      ),
    ).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { commandContext } from '../../src/engine/commands.js';
import { connectorDecider, type ConnectorState } from './changeConnector.js';

const connectorId = '0b5e2a4c-1d2e-4f3a-8b9c-0d1e2f3a4b5c';
const in_ = (project: string) => commandContext({ subject: 't', tenant: project, via: 'rest' }, { project });
const existing: ConnectorState = { exists: true, removed: false, project: 'acme' };

describe('connector decisions', () => {
  it('adds a connector once', () => {
    const add = {
      kind: 'add' as const,
      connectorId,
      name: 'Team',
      type: 'slack',
      settings: { token: { sealed: 'x' } },
    };
    expect(connectorDecider.decide(add, connectorDecider.initialState(), in_('acme'))).toEqual([
      {
        type: 'ConnectorAdded',
        schemaVersion: 1,
        data: { connectorId, name: 'Team', kind: 'slack', settings: { token: { sealed: 'x' } } },
      },
    ]);
    expect(() => connectorDecider.decide(add, existing, in_('acme'))).toThrow(/already exists/);
  });

  it("treats another project's connector, and a removed one, as not found", () => {
    const remove = { kind: 'remove' as const, connectorId };
    expect(() => connectorDecider.decide(remove, existing, in_('globex'))).toThrow(/No connector/);
    expect(() => connectorDecider.decide(remove, { ...existing, removed: true }, in_('acme'))).toThrow(
      /No connector/,
    );
    expect(connectorDecider.decide(remove, existing, in_('acme'))).toEqual([
      { type: 'ConnectorRemoved', schemaVersion: 1, data: { connectorId } },
    ]);
  });
});

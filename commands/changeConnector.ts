import type { z } from 'zod';
import type { ConnectorEventSchemas } from '../src/domain/connectors.js';
import { streamId, type StoredEvent } from '../src/domain/events.js';
import { handleCommand, type CommandContext, type Decider } from '../src/engine/commands.js';
import { IllegalStateError, NotFoundError } from '../src/errors.js';
import type { EventStore } from '../src/ports/eventStore.js';

type ConnectorEvent = z.infer<(typeof ConnectorEventSchemas)[number]>;

export interface ConnectorState {
  exists: boolean;
  removed: boolean;
  project: string | null;
}

/** Settings arrive here already sealed: secrets never reach an event in clear. */
export type ConnectorCommand =
  | { kind: 'add'; connectorId: string; name: string; type: string; settings: Record<string, unknown> }
  | { kind: 'update'; connectorId: string; name?: string; settings?: Record<string, unknown> }
  | { kind: 'remove'; connectorId: string };

export const connectorDecider: Decider<ConnectorState, ConnectorCommand, ConnectorEvent> = {
  initialState: () => ({ exists: false, removed: false, project: null }),
  evolve: (state, event: StoredEvent<ConnectorEvent>) =>
    event.type === 'ConnectorAdded'
      ? { exists: true, removed: false, project: event.metadata.project }
      : event.type === 'ConnectorRemoved'
        ? { ...state, removed: true }
        : state,
  decide: (command, state, context) => {
    if (command.kind === 'add') {
      if (state.exists) throw new IllegalStateError(`Connector ${command.connectorId} already exists`);
      const { connectorId, name, type, settings } = command;
      return [
        { type: 'ConnectorAdded', schemaVersion: 1, data: { connectorId, name, kind: type, settings } },
      ];
    }
    // Another project's connector is as unknown as a missing one.
    if (!state.exists || state.removed || state.project !== context.project) {
      throw new NotFoundError(`No connector with id ${command.connectorId}`);
    }
    if (command.kind === 'update') {
      const { connectorId, name, settings } = command;
      return [{ type: 'ConnectorUpdated', schemaVersion: 1, data: { connectorId, name, settings } }];
    }
    return [{ type: 'ConnectorRemoved', schemaVersion: 1, data: { connectorId: command.connectorId } }];
  },
};

export const changeConnector = async (
  store: EventStore,
  command: ConnectorCommand,
  context: CommandContext,
) => handleCommand(store, streamId('connector', command.connectorId), connectorDecider, command, context);

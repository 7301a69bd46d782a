import { z } from 'zod';
import { checkConnectorId, ConnectorChangedSchema, ConnectorCreatedSchema, ConnectorCreateSchema, ConnectorIdSchema, ConnectorUpdateInputSchema } from '../../src/domain/connectorRequests.js';
import { connectorRoots } from '../../src/services/connectorRoots.js';
import type { ConnectorEventSchemas } from '../../src/domain/connectors.js';
import { CONNECTORS, type ConnectorRow } from '../../src/domain/connectorView.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import { newId } from '../../src/domain/ids.js';
import type { Position } from '../../src/domain/position.js';
import { commandContext, handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { settle } from '../../src/engine/settling.js';
import { SettlingSchema } from '../../src/domain/settling.js';
import { IllegalStateError, NotFoundError } from '../../src/errors.js';
import { defineOperation, type OperationContext, type RouteSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { ReadModels } from '../../src/ports/projections.js';
import type { ReadableRoots } from '../../src/ports/readableRoots.js';
import type { SecretBox } from '../../src/ports/secretBox.js';

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

export interface ConnectorCommandDeps {
  store: EventStore;
  readModels: ReadModels;
  secrets: SecretBox;
  /** The folders connector roots must lie in. */
  readable: ReadableRoots;
  /** Refuses (ValidationError) settings that name a server remote connectors may not reach. */
  checkEndpoint: (type: string, settings: Record<string, unknown>) => Promise<void>;
  /** Waits for the connectors read model, the one the next read of a connector uses. */
  waitForProjections: (position: Position) => Promise<void>;
}

/**
 * Settings are sealed before they become events; the answer waits, within a bound, until the next
 * read sees the change, and says so when it is stored but not yet readable.
 */
const changeFor = async (deps: ConnectorCommandDeps, command: ConnectorCommand, operation: OperationContext) => {
  const context = commandContext(operation.actor, { project: operation.project, correlationId: operation.correlationId });
  const result = await changeConnector(deps.store, command, context);
  const settling = result.position ? await settle(deps.waitForProjections(result.position), result.position) : null;
  return { context, settled: settling ? { settling } : {} };
};

/** Over MCP, `context.connector_management` runs these. */
const connectorWrite = { tool: false, toolset: 'admin', writes: true, scope: 'connectors:write' } as const;

export const addConnectorSurfaces = {
  name: 'connectors.add',
  ...connectorWrite,
  input: ConnectorCreateSchema,
  output: ConnectorCreatedSchema,
  rest: { method: 'POST', path: '/connectors', summary: 'Add a connector', status: 201, rateClass: 'connectors' },
} as const satisfies RouteSurfaces;

export const updateConnectorSurfaces = {
  name: 'connectors.update',
  ...connectorWrite,
  input: ConnectorUpdateInputSchema,
  output: ConnectorChangedSchema,
  rest: { method: 'PUT', path: '/connectors/{id}', summary: 'Update a connector', rateClass: 'connectors' },
} as const satisfies RouteSurfaces;

export const removeConnectorSurfaces = {
  name: 'connectors.remove',
  ...connectorWrite,
  input: z.object({ id: ConnectorIdSchema }),
  output: z.object({ id: z.string(), status: z.literal('removed'), settling: SettlingSchema.optional() }),
  rest: { method: 'DELETE', path: '/connectors/{id}', summary: 'Remove a connector', status: 204, rateClass: 'connectors' },
} as const satisfies RouteSurfaces;

export const addConnectorOperation = (deps: ConnectorCommandDeps) =>
  defineOperation({
    ...addConnectorSurfaces,
    title: 'Add a connector',
    description: 'Adds a connector to the project; its secrets are stored sealed.',
    run: async ({ type, name, config }, operation) => {
      connectorRoots(type, config, deps.readable);
      await deps.checkEndpoint(type, config);
      const connectorId = newId();
      const { context, settled } = await changeFor(
        deps,
        { kind: 'add', connectorId, name, type, settings: deps.secrets.seal(config) },
        operation,
      );
      return { id: connectorId, type, name, status: 'configuring', created_at: context.now, ...settled };
    },
  });

export const updateConnectorOperation = (deps: ConnectorCommandDeps) =>
  defineOperation({
    ...updateConnectorSurfaces,
    title: 'Update a connector',
    description: "Changes a connector's name or settings; a reindex applies them.",
    run: async ({ id, name, config }, operation) => {
      const current = await deps.readModels.get<ConnectorRow>(CONNECTORS, checkConnectorId(id));
      if (!current || current.project !== operation.project) throw new NotFoundError(`No connector with id ${id}`);
      if (config) {
        connectorRoots(current.type, config, deps.readable);
        await deps.checkEndpoint(current.type, config);
      }
      const { settled } = await changeFor(
        deps,
        { kind: 'update', connectorId: id, name, settings: config ? deps.secrets.seal(config) : undefined },
        operation,
      );
      return {
        id,
        status: 'reconfiguring',
        message: 'Configuration updated; reindex with POST /index/start to apply it',
        ...settled,
      };
    },
  });

export const removeConnectorOperation = (deps: ConnectorCommandDeps) =>
  defineOperation({
    ...removeConnectorSurfaces,
    title: 'Remove a connector',
    description: 'Removes a connector from the project.',
    run: async ({ id }, operation) => {
      const { settled } = await changeFor(deps, { kind: 'remove', connectorId: checkConnectorId(id) }, operation);
      return { id, status: 'removed' as const, ...settled };
    },
  });

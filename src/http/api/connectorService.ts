import { changeConnector } from '../../../commands/changeConnector.js';
import { getConnector, listConnectors } from '../../../queries/listConnectors.js';
import { newId, UUID_PATTERN } from '../../domain/ids.js';
import { NotFoundError } from '../../errors.js';
import type { Position } from '../../domain/position.js';
import { commandContext } from '../../engine/commands.js';
import type { OperationContext } from '../../operations.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ReadModels } from '../../ports/projections.js';
import { connectorRoots } from '../../ingestion/readableRoots.js';
import type { ReadableRoots } from '../../ports/readableRoots.js';
import { redactSecrets } from '../../domain/secrets.js';
import type { SecretBox } from '../../ports/secretBox.js';

export interface ConnectorServiceDeps {
  store: EventStore;
  readModels: ReadModels;
  secrets: SecretBox;
  /** The folders connector roots must lie in. */
  readable: ReadableRoots;
  waitForProjections: (position: Position) => Promise<void>;
}

/** Ids are uuids; anything else names no connector. */
const checkId = (id: string) => {
  if (!UUID_PATTERN.test(id)) throw new NotFoundError(`No connector with id ${id}`);
  return id;
};

const redact = (settings: Record<string, unknown>) => redactSecrets(settings) as Record<string, unknown>;

/** Connectors of the caller's project: secrets sealed before they become events, never shown back. */
export const createConnectorService = ({
  store,
  readModels,
  secrets,
  readable,
  waitForProjections,
}: ConnectorServiceDeps) => {
  const contextOf = (operation: OperationContext) =>
    commandContext(operation.actor, { project: operation.project, correlationId: operation.correlationId });
  // Answers reflect the change: the next read sees it.
  const settle = async (position: Position | null) => {
    if (position) await waitForProjections(position);
  };
  return {
    list: (operation: OperationContext) => listConnectors(readModels, operation.project, redact),
    get: (id: string, operation: OperationContext) =>
      getConnector(readModels, operation.project, checkId(id), redact),
    add: async (
      input: { type: string; name: string; config: Record<string, unknown> },
      operation: OperationContext,
    ) => {
      connectorRoots(input.type, input.config, readable);
      const connectorId = newId();
      const context = contextOf(operation);
      const result = await changeConnector(
        store,
        {
          kind: 'add',
          connectorId,
          name: input.name,
          type: input.type,
          settings: secrets.seal(input.config),
        },
        context,
      );
      await settle(result.position);
      return {
        id: connectorId,
        type: input.type,
        name: input.name,
        status: 'configuring',
        created_at: context.now,
      };
    },
    update: async (
      id: string,
      input: { name?: string; config?: Record<string, unknown> },
      operation: OperationContext,
    ) => {
      const current = await getConnector(readModels, operation.project, checkId(id), (s) => s);
      if (input.config) connectorRoots(current.type, input.config, readable);
      const result = await changeConnector(
        store,
        {
          kind: 'update',
          connectorId: id,
          name: input.name,
          settings: input.config ? secrets.seal(input.config) : undefined,
        },
        contextOf(operation),
      );
      await settle(result.position);
      return {
        id,
        status: 'reconfiguring',
        message: 'Configuration updated; reindex with POST /index/start to apply it',
      };
    },
    remove: async (id: string, operation: OperationContext) => {
      const result = await changeConnector(
        store,
        { kind: 'remove', connectorId: checkId(id) },
        contextOf(operation),
      );
      await settle(result.position);
    },
  };
};
export type ConnectorService = ReturnType<typeof createConnectorService>;

import { z } from 'zod';
import { ConnectorCreateSchema, ConnectorUpdateSchema } from '../../src/domain/connectorRequests.js';
import { ValidationError } from '../../src/errors.js';
import { callOperation, defineOperation, type Operation } from '../../src/operations.js';
import { parseInput } from '../../src/validation.js';

const ConnectorManagementInputSchema = z.object({
  action: z.enum(['list', 'add', 'update', 'remove']),
  connector_id: z.string().optional(),
  connector_config: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('add: {type, name, config}; update: {name?, config?}'),
});

/** The MCP tool over the connector operations the REST API serves. */
export const manageConnectorsOperation = (connectors: Readonly<Record<'list' | 'add' | 'update' | 'remove', Operation>>) =>
  defineOperation({
    name: 'context.connector_management',
    title: 'Connector management',
    description:
      'Manage data source connectors of the project: list, add, update or remove. Secrets are stored sealed and shown as ***.',
    toolset: 'admin',
    writes: true,
    scope: 'connectors:read',
    writeScope: 'connectors:write',
    onlyReads: ({ action }) => action === 'list',
    input: ConnectorManagementInputSchema,
    output: z.object({ action: z.string(), result: z.unknown() }),
    run: async ({ action, connector_id: id, connector_config: config }, context) => {
      if (action === 'list') return { action, result: await callOperation(connectors.list, {}, context, { onBehalf: true }) };
      if (action === 'add')
        return { action, result: await callOperation(connectors.add, parseInput(ConnectorCreateSchema, config ?? {}), context, { onBehalf: true }) };
      if (!id) throw new ValidationError(`connector_id is required to ${action} a connector`);
      if (action === 'update')
        return {
          action,
          result: await callOperation(connectors.update, { ...parseInput(ConnectorUpdateSchema, config ?? {}), id }, context, { onBehalf: true }),
        };
      return { action, result: await callOperation(connectors.remove, { id }, context, { onBehalf: true }) };
    },
  });

import { z } from 'zod';
import {
  checkConnectorId,
  ConnectorDetailSchema,
  ConnectorIdSchema,
  ConnectorListSchema,
  redactSettings,
} from '../../src/domain/connectorRequests.js';
import { CONNECTORS, type ConnectorRow } from '../../src/domain/connectorView.js';
import { NotFoundError } from '../../src/errors.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { ReadModels } from '../../src/ports/projections.js';

/** A connector as responses show it; `settings` must already be redacted by the caller's view. */
export interface ConnectorView {
  id: string;
  type: string;
  name: string;
  status: string;
  last_sync: string | null;
  created_at: string;
  config: Record<string, unknown>;
}

const viewOf = (
  row: ConnectorRow,
  redact: (settings: Record<string, unknown>) => Record<string, unknown>,
): ConnectorView => ({
  id: row.id,
  type: row.type,
  name: row.name,
  status: row.status,
  last_sync: row.lastSync ?? null,
  created_at: row.createdAt,
  config: redact(row.settings),
});

/** The connectors of one project. */
export const listConnectors = async (
  readModels: ReadModels,
  project: string,
  redact: (settings: Record<string, unknown>) => Record<string, unknown>,
): Promise<ConnectorView[]> => {
  const { items } = await readModels.find<ConnectorRow>(CONNECTORS, {
    where: { project },
    orderBy: [{ field: 'createdAt', direction: 'asc' }],
    limit: 1000,
  });
  return items.map((row) => viewOf(row, redact));
};

/** One connector of the project, with how many documents its source holds; another project's is not found. */
export const getConnector = async (
  readModels: ReadModels,
  project: string,
  id: string,
  redact: (settings: Record<string, unknown>) => Record<string, unknown>,
) => {
  const row = await readModels.get<ConnectorRow>(CONNECTORS, id);
  if (!row || row.project !== project) throw new NotFoundError(`No connector with id ${id}`);
  const counts = await readModels.count('documents', 'source', { project });
  const documents = (counts.get(row.name) ?? 0) + (counts.get(`${row.type}:${row.name}`) ?? 0);
  return { ...viewOf(row, redact), stats: { documents_indexed: documents, last_error: row.lastError?.message ?? null } };
};

/** Over MCP, `context.connector_management` lists them. */
const connectorRead = { tool: false, toolset: 'admin', writes: false, scope: 'connectors:read' } as const;

export const listConnectorsSurfaces = {
  name: 'connectors.list',
  ...connectorRead,
  input: z.object({}),
  output: ConnectorListSchema,
  rest: { method: 'GET', path: '/connectors', summary: 'List connectors', rateClass: 'connectors' },
} as const satisfies RouteSurfaces;

export const getConnectorSurfaces = {
  name: 'connectors.get',
  ...connectorRead,
  input: z.object({ id: ConnectorIdSchema }),
  output: ConnectorDetailSchema,
  rest: { method: 'GET', path: '/connectors/{id}', summary: 'Connector details', rateClass: 'connectors' },
} as const satisfies RouteSurfaces;

export const listConnectorsOperation = (readModels: ReadModels) =>
  defineOperation({
    ...listConnectorsSurfaces,
    title: 'List connectors',
    description: "The project's connectors, their secrets shown as ***.",
    run: async (_input, { project }) => ({ connectors: await listConnectors(readModels, project, redactSettings) }),
  });

export const getConnectorOperation = (readModels: ReadModels) =>
  defineOperation({
    ...getConnectorSurfaces,
    title: 'Connector details',
    description: 'One connector of the project with how many documents it has indexed, its secrets shown as ***.',
    run: ({ id }, { project }) => getConnector(readModels, project, checkConnectorId(id), redactSettings),
  });

import type { z } from 'zod';
import type { ConnectorEventSchemas, ConnectorSyncEventSchemas } from '../../src/domain/connectors.js';
import { CONNECTORS, type ConnectorRow } from '../../src/domain/connectorView.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

type ConnectorEvent = z.infer<(typeof ConnectorEventSchemas)[number] | (typeof ConnectorSyncEventSchemas)[number]>;

export const connectorsProjection: DocumentProjection<ConnectorRow> = {
  name: CONNECTORS,
  version: 2,
  eventTypes: [
    'ConnectorAdded',
    'ConnectorUpdated',
    'ConnectorRemoved',
    'ConnectorSyncCheckpointed',
    'ConnectorSyncCompleted',
    'ConnectorSyncFailed',
  ],
  documentIds: (event) => [(event.data as { connectorId: string }).connectorId],
  evolve: (row, stored) => {
    const event = stored as StoredEvent<ConnectorEvent>;
    switch (event.type) {
      case 'ConnectorAdded':
        return {
          id: event.data.connectorId,
          project: event.metadata.project,
          type: event.data.kind,
          name: event.data.name,
          settings: event.data.settings,
          status: 'configuring',
          createdAt: event.recordedAt,
          updatedAt: event.recordedAt,
          lastSync: null,
          lastError: null,
        };
      case 'ConnectorUpdated':
        return row
          ? {
              ...row,
              name: event.data.name ?? row.name,
              settings: event.data.settings ?? row.settings,
              status: 'reconfiguring',
              updatedAt: event.recordedAt,
            }
          : row;
      case 'ConnectorRemoved':
        return null;
      case 'ConnectorSyncCheckpointed':
        return row ? { ...row, status: 'syncing' } : row;
      case 'ConnectorSyncCompleted':
        return row ? { ...row, status: 'active', lastSync: event.recordedAt, lastError: null } : row;
      case 'ConnectorSyncFailed':
        return row
          ? { ...row, status: 'error', lastError: { code: event.data.code, message: event.data.message, at: event.recordedAt } }
          : row;
      default:
        return row;
    }
  },
};

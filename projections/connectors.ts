import type { z } from 'zod';
import type { ConnectorEventSchemas } from '../src/domain/connectors.js';
import { CONNECTORS, type ConnectorRow } from '../src/domain/connectorView.js';
import type { StoredEvent } from '../src/domain/events.js';
import type { DocumentProjection } from '../src/ports/projections.js';

type ConnectorEvent = z.infer<(typeof ConnectorEventSchemas)[number]>;

export const connectorsProjection: DocumentProjection<ConnectorRow> = {
  name: CONNECTORS,
  version: 1,
  eventTypes: ['ConnectorAdded', 'ConnectorUpdated', 'ConnectorRemoved'],
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
      default:
        return row;
    }
  },
};

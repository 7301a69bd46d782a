import type { z } from 'zod';
import type { ConnectorEventSchemas, ConnectorSyncEventSchemas } from '../src/domain/connectors.js';
import type { StoredEvent } from '../src/domain/events.js';
import type { DocumentProjection } from '../src/ports/projections.js';

type ConnectorEvent = z.infer<(typeof ConnectorEventSchemas)[number] | (typeof ConnectorSyncEventSchemas)[number]>;

/** A connector as the API lists it; secret settings stay sealed here too. */
export interface ConnectorRow {
  id: string;
  project: string;
  type: string;
  name: string;
  settings: Record<string, unknown>;
  /** `syncing` once a sync saved a cursor, `active` after a completed sync, `error` after a failed one. */
  status: 'configuring' | 'reconfiguring' | 'syncing' | 'active' | 'error';
  createdAt: string;
  updatedAt: string;
  /** When the last sync completed; absent on rows built before syncs were recorded. */
  lastSync?: string | null;
  lastError?: { code: string; message: string; at: string } | null;
}

export const CONNECTORS = 'connectors';

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

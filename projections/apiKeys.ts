import type { AuthEvent } from '../src/domain/auth.js';
import type { StoredEvent } from '../src/domain/events.js';
import type { DocumentProjection } from '../src/ports/projections.js';

/** An API key as authentication looks it up: by the hash of its value. */
export interface ApiKeyRow {
  keyId: string;
  hash: string;
  scopes: string[];
  tenant: string;
  label: string | null;
  revoked: boolean;
  createdAt: string;
  createdBy: string;
}

export const API_KEYS = 'api_keys';

export const apiKeysProjection: DocumentProjection<ApiKeyRow> = {
  name: API_KEYS,
  version: 1,
  eventTypes: ['ApiKeyCreated', 'ApiKeyRevoked'],
  documentIds: (event) => [(event.data as { keyId: string }).keyId],
  evolve: (row, stored) => {
    const event = stored as StoredEvent<AuthEvent>;
    if (event.type === 'ApiKeyCreated') {
      return {
        ...event.data,
        revoked: false,
        createdAt: event.recordedAt,
        createdBy: event.metadata.actor.subject,
      };
    }
    if (event.type === 'ApiKeyRevoked' && row) return { ...row, revoked: true };
    return row;
  },
};

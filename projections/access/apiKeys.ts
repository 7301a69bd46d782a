import { API_KEYS, type ApiKeyRow } from '../../src/domain/apiKeyView.js';
import type { AuthEvent } from '../../src/domain/auth.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

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

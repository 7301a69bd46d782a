import { describe, expect, it } from 'vitest';
import { openPglite } from '../postgres/database.js';
import { START } from '../../src/domain/position.js';
import { newEvents } from '../../test/support/events.js';
import { createPostgresEventStore } from './postgresEventStore.js';
import { EVENT_STORE_SCHEMA } from './postgresSchema.js';

describe('event store schema', () => {
  it('converts a data directory made with jsonb payload columns and keeps its events readable', async () => {
    const db = await openPglite();
    try {
      // The schema as it was before payloads were stored as json.
      const before = EVENT_STORE_SCHEMA.replace('data json NOT NULL', 'data jsonb NOT NULL')
        .replace('metadata json NOT NULL', 'metadata jsonb NOT NULL')
        .replace(/\(x\.ev->'data'\)::json, \(x\.ev->'metadata'\)::json/, "x.ev->'data', x.ev->'metadata'");
      await db.exec(before);
      const old = await createPostgresEventStore(db);
      const written = newEvents(3, { project: 'p' });
      await old.append('job-1', written, 'no_stream');
      await old.close();

      const store = await createPostgresEventStore(db);
      const [type] = await db.query<{ type: string }>(
        `SELECT format_type(atttypid, NULL) AS type FROM pg_attribute
         WHERE attrelid = 'ledger_events'::regclass AND attname = 'metadata'`,
      );
      expect(type?.type).toBe('json');
      await store.append('job-1', newEvents(1, { project: 'p' }), 2n);
      const events = await store.readAll({ from: START });
      expect(events).toHaveLength(4);
      expect(events.slice(0, 3).map((e) => [e.data, e.metadata])).toEqual(
        written.map((e) => [e.data, e.metadata]),
      );
      expect(events.every((e) => e.recordedAt === new Date(e.recordedAt).toISOString())).toBe(true);
      await store.close();
    } finally {
      await db.close();
    }
  });
});

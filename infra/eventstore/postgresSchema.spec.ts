import { describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../postgres/database.js';
import { START } from '../../src/domain/position.js';
import { newEvents } from '../../test/support/events.js';
import { createPostgresEventStore } from './postgresEventStore.js';
import { EVENT_STORE_SCHEMA } from './postgresSchema.js';

/** Runs `test` on a fresh embedded database, closed afterwards. */
const onEmbeddedDatabase = async (test: (db: Database) => Promise<void>): Promise<void> => {
  const db = await openPglite();
  try {
    await test(db);
  } finally {
    await db.close();
  }
};

describe('event store schema', () => {
  it('converts a data directory made with jsonb payload columns and keeps its events readable', () =>
    onEmbeddedDatabase(async (db) => {
      // The table as it was before payloads were stored as json.
      const before = EVENT_STORE_SCHEMA.replace('data json NOT NULL', 'data jsonb NOT NULL').replace(
        'metadata json NOT NULL',
        'metadata jsonb NOT NULL',
      );
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
    }));

  it('replaces the append functions of earlier versions', () =>
    onEmbeddedDatabase(async (db) => {
      await db.exec(`
        CREATE FUNCTION ledger_append(text, text, text, json) RETURNS void LANGUAGE sql AS '';
        CREATE FUNCTION ledger_append_batch(json, json) RETURNS void LANGUAGE sql AS '';`);
      const store = await createPostgresEventStore(db);
      const functions = await db.query<{ signature: string }>(
        `SELECT oid::regprocedure::text AS signature FROM pg_proc
         WHERE proname IN ('ledger_append', 'ledger_append_batch') ORDER BY proname`,
      );
      expect(functions.map((f) => f.signature)).toEqual([
        'ledger_append(text,text,text,uuid,text[],integer[],json[],json[],text[])',
        'ledger_append_batch(text[],text[],text[],uuid[],integer[],integer[],text[],integer[],json[],json[],text[])',
      ]);
      await store.append('job-1', newEvents(2, { project: 'p' }), 'no_stream');
      expect(await store.readStream('job-1')).toHaveLength(2);
      await store.close();
    }));

  it('gives a data directory keyed by global position alone one key in commit order, and keeps its events and their ids', () =>
    onEmbeddedDatabase(async (db) => {
      // The table as it was: keyed by global position, with commit order in an index of its own.
      await db.exec(`
        CREATE TABLE ledger_events (
          global_position bigserial PRIMARY KEY,
          transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
          stream_id text NOT NULL, stream_revision bigint NOT NULL, event_id uuid NOT NULL UNIQUE,
          event_type text NOT NULL, schema_version integer NOT NULL, data json NOT NULL, metadata json NOT NULL,
          category text NOT NULL, project text NOT NULL, recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
          UNIQUE (stream_id, stream_revision));
        CREATE INDEX ledger_events_commit_order ON ledger_events (transaction_id, global_position);`);
      const [written] = newEvents(1, { project: 'p' });
      await db.query(
        `INSERT INTO ledger_events (stream_id, stream_revision, event_id, event_type, schema_version, data, metadata, category, project)
         VALUES ('job-1', 0, $1, $2, $3, $4, $5, 'job', 'p')`,
        [
          written!.metadata.eventId,
          written!.type,
          written!.schemaVersion,
          JSON.stringify(written!.data),
          JSON.stringify(written!.metadata),
        ],
      );

      const store = await createPostgresEventStore(db);
      const indexes = await db.query<{ name: string; definition: string }>(
        `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS definition
         FROM pg_index WHERE indrelid = 'ledger_events'::regclass`,
      );
      expect(indexes.map((i) => i.name).sort()).toEqual([
        'ledger_events_first_event_id',
        'ledger_events_pkey',
        'ledger_events_stream_id_stream_revision_key',
      ]);
      expect(indexes.find((i) => i.name === 'ledger_events_pkey')?.definition).toContain(
        '(transaction_id, global_position)',
      );
      const events = await store.readAll({ from: START });
      expect(events.map((e) => [e.streamId, e.data, e.metadata])).toEqual([
        ['job-1', written!.data, written!.metadata],
      ]);
      // The event's id, stored before first ids were, still makes a retry of its append a retry.
      expect(await store.append('job-1', [written!], 'any')).toEqual({
        nextExpectedRevision: 0n,
        position: events[0]!.position,
      });
      expect(await store.readStream('job-1')).toHaveLength(1);
      await store.close();
    }));
});

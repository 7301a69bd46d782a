import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import { openPglite, type Database } from '../../infra/postgres/database.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { IllegalStateError } from '../../src/errors.js';
import { migrateEvents } from '../../src/migration/migrateEvents.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { newEvents } from '../support/events.js';

const essence = (events: readonly StoredEvent[]) =>
  events.map(({ streamId, revision, type, schemaVersion, data, metadata }) => ({
    streamId,
    revision,
    type,
    schemaVersion,
    data,
    metadata,
  }));

describe('migrating events between stores', () => {
  const databases: Database[] = [];
  const stores: EventStore[] = [];
  const openStore = async () => {
    const db = await openPglite();
    databases.push(db);
    const store = await createPostgresEventStore(db);
    stores.push(store);
    return store;
  };
  let source: EventStore;
  const a = `job-${randomUUID()}`;
  const b = `doc-${randomUUID()}`;

  beforeAll(async () => {
    source = await openStore();
    await source.append(a, newEvents(3), 'no_stream');
    await source.append(b, newEvents(2, { project: 'other' }), 'no_stream');
    await source.append(a, newEvents(2), 2n);
    await source.append(b, newEvents(1), 1n);
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const db of databases) await db.close();
  });

  it('copies every event in order, keeping streams, revisions, ids, metadata and payloads', async () => {
    const destination = await openStore();
    const progress = await migrateEvents(source, destination, { pageSize: 4 });
    expect(progress).toMatchObject({ read: 8, copied: 8 });
    expect(essence(await destination.readAll())).toEqual(essence(await source.readAll()));
    expect(essence(await destination.readStream(a))).toEqual(essence(await source.readStream(a)));
  });

  it('copies nothing twice when run again', async () => {
    const destination = await openStore();
    await migrateEvents(source, destination, { pageSize: 3 });
    const head = await destination.headPosition();
    // A different page size groups the runs differently; the result must not change.
    const again = await migrateEvents(source, destination, { pageSize: 5 });
    expect(again.read).toBe(8);
    expect(await destination.headPosition()).toBe(head);
    expect(essence(await destination.readAll())).toEqual(essence(await source.readAll()));
  });

  it('resumes a migration that stopped partway through a stream', async () => {
    const destination = await openStore();
    const [first, second] = await source.readStream(a, { maxCount: 2 });
    await destination.append(a, [first!, second!], 'no_stream');
    const progress = await migrateEvents(source, destination);
    expect(progress.read).toBe(8);
    expect(essence(await destination.readStream(a))).toEqual(essence(await source.readStream(a)));
    expect(await destination.readAll()).toHaveLength(8);
  });

  it('stops at a destination stream that holds other events', async () => {
    const destination = await openStore();
    await destination.append(a, newEvents(1), 'no_stream');
    await expect(migrateEvents(source, destination)).rejects.toBeInstanceOf(IllegalStateError);
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendStatement, createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import { prepareAppend } from '../../infra/eventstore/preparedAppend.js';
import { serverParam } from '../../infra/eventstore/postgresEventRows.js';
import { connectPostgres, openPglite } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { positionParts } from '../../src/domain/position.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { newEvents } from '../support/events.js';
import { createTestDatabase, testPostgresUrl, type TestDatabase } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcpProxy.js';
import { describeEventStoreContract, type OpenAppend } from './eventStore.contract.js';
import { describeWith, POSTGRES_SERVER } from '../support/requirements.js';

// One PGlite instance for the whole file (opening one takes seconds); tests isolate by fresh stream ids.
for (const [engine, open] of [
  ['PGlite (in memory)', () => openPglite()],
  ['PGlite in its own thread', () => openPgliteThread()],
] as const) {
  describeEventStoreContract(
    `postgres on ${engine}`,
    async () => {
      const db = await open();
      const store = await createPostgresEventStore(db, { pollIntervalMs: 100 });
      return {
        store,
        cleanup: async () => {
          await store.close();
          await db.close();
        },
      };
    },
    { concurrentRaces: true },
  );
}

const serverUrl = testPostgresUrl();
if (serverUrl) {
  describeEventStoreContract(
    'postgres on a PostgreSQL server',
    async () => {
      const database = await createTestDatabase(serverUrl);
      const db = connectPostgres(database.url, { max: 10 });
      const store = await createPostgresEventStore(db, { pollIntervalMs: 100 });
      const openClients = new Set<pg.Client>();
      return {
        store,
        appendInOpenTransaction: async (streamId, events): Promise<OpenAppend> => {
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          openClients.add(client);
          const statement = appendStatement([prepareAppend(streamId, events, 'any')]);
          await client.query('BEGIN');
          await client.query(statement.text, statement.params.map(serverParam));
          return {
            commit: async () => {
              await client.query('COMMIT');
              await client.end();
              openClients.delete(client);
            },
          };
        },
        cleanup: async () => {
          await Promise.all([...openClients].map((client) => client.end()));
          await store.close();
          await db.close();
          await database.drop();
        },
      };
    },
    { concurrentRaces: true },
  );

  describe('postgres event store on a server, across processes', () => {
    let database: TestDatabase;
    const closers: (() => Promise<void>)[] = [];
    const openStore = async (pollIntervalMs: number, url = database.url): Promise<EventStore> => {
      const db = connectPostgres(url, { max: 2 });
      const store = await createPostgresEventStore(db, { pollIntervalMs });
      closers.push(async () => {
        await store.close();
        await db.close();
      });
      return store;
    };

    beforeAll(async () => {
      database = await createTestDatabase(serverUrl);
    });
    afterAll(async () => {
      for (const close of closers.reverse()) await close();
      await database.drop();
    });

    it('wakes a subscriber on another connection pool by notification, long before it would poll', async () => {
      const writer = await openStore(60_000);
      const reader = await openStore(60_000);
      const head = await reader.headPosition();
      const received: StoredEvent[] = [];
      const subscription = reader.subscribe(
        async (events) => {
          received.push(...events);
          await Promise.resolve();
        },
        { from: head },
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await writer.append('job-notified', newEvents(2), 'no_stream');
      const deadline = Date.now() + 5_000;
      while (received.length < 2 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await subscription.stop();
      expect(received).toHaveLength(2);
    });

    it('listens again after the connection to the server was lost, and catches up on what it missed', async () => {
      const direct = new URL(database.url);
      const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
      closers.push(() => proxy.close());
      const proxied = new URL(database.url);
      proxied.port = String(proxy.port);
      const writer = await openStore(60_000);
      const reader = await openStore(60_000, proxied.toString());
      const received: StoredEvent[] = [];
      const subscription = reader.subscribe(
        async (events) => {
          received.push(...events);
          await Promise.resolve();
        },
        { from: await reader.headPosition() },
      );
      const waitFor = async (count: number) => {
        const deadline = Date.now() + 8_000;
        while (received.length < count && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));
      };
      await new Promise((resolve) => setTimeout(resolve, 200));
      await proxy.cut();
      await writer.append('job-missed', newEvents(1), 'no_stream');
      await proxy.restore();
      await waitFor(1);
      await writer.append('job-heard', newEvents(1), 'no_stream');
      await waitFor(2);
      await subscription.stop();
      expect(received.map((e) => e.streamId)).toEqual(['job-missed', 'job-heard']);
    });
  });
} else {
  describeWith(POSTGRES_SERVER, 'EventStore contract: postgres on a PostgreSQL server', () => undefined);
}

describe('postgres event store on PGlite, the only writer of its database', () => {
  let db: Awaited<ReturnType<typeof openPglite>>;
  let store: EventStore;
  beforeAll(async () => {
    db = await openPglite();
    store = await createPostgresEventStore(db);
  });
  afterAll(async () => {
    await store.close();
    await db.close();
  });

  it('knows the revision of the streams it appended to, the latest even after a retried older append', async () => {
    expect(store.knownRevision?.('job-unwritten')).toBeUndefined();
    const first = newEvents(2);
    await store.append('job-known', first, 'no_stream');
    expect(store.knownRevision?.('job-known')).toBe(1n);
    await store.append('job-known', newEvents(1), 1n);
    expect(store.knownRevision?.('job-known')).toBe(2n);
    expect((await store.append('job-known', first, 'no_stream')).nextExpectedRevision).toBe(1n);
    expect(store.knownRevision?.('job-known')).toBe(2n);
  });

  it('writes the appends made while one is being written together, in one transaction, each with its own answer', async () => {
    const streams = Array.from({ length: 6 }, () => `job-${crypto.randomUUID()}`);
    const results = await Promise.all(streams.map((stream) => store.append(stream, newEvents(3), 'no_stream')));
    // The first goes at once, alone, unless an earlier append is still being written; the others
    // wait and then share one transaction.
    const transactions = new Set(results.map((r) => positionParts(r.position)[0]));
    expect(transactions.size).toBeLessThanOrEqual(2);
    for (const [i, stream] of streams.entries()) {
      expect(results[i]!.nextExpectedRevision).toBe(2n);
      const [last] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
      expect(last!.position).toBe(results[i]!.position);
    }
  });

  it('hands a subscriber an append made while it was handling a batch, without waiting for the next poll', async () => {
    const patient = await createPostgresEventStore(db, { pollIntervalMs: 60_000 });
    const stream = `job-${crypto.randomUUID()}`;
    const from = await patient.headPosition();
    await patient.append(stream, newEvents(1), 'no_stream');
    const later = newEvents(1);
    const handled: string[] = [];
    const deliveredLater = new Promise<void>((resolve) => {
      const subscription = patient.subscribe(
        async (events) => {
          handled.push(...events.map((e) => e.metadata.eventId));
          if (handled.length === 1) await patient.append(stream, later, 0n);
          if (handled.includes(later[0]!.metadata.eventId)) {
            resolve();
            void subscription.stop();
          }
        },
        { from },
      );
    });
    const tooLate = new Promise((_, reject) => setTimeout(() => reject(new Error('waited for the poll')), 3_000));
    await Promise.race([deliveredLater, tooLate]);
    expect(handled).toHaveLength(2);
    await patient.close();
  });
});

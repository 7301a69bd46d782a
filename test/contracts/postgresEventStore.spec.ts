import pg from 'pg';
import { describe, it } from 'vitest';
import { appendStatement, createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import { connectPostgres, openPglite } from '../../infra/postgres/database.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres.js';
import { describeEventStoreContract, type OpenAppend } from './eventStore.contract.js';

// One PGlite instance for the whole file (opening one takes seconds); tests isolate by fresh stream ids.
describeEventStoreContract(
  'postgres on PGlite (in memory)',
  async () => {
    const db = await openPglite();
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
          const statement = appendStatement(streamId, events, 'any');
          await client.query('BEGIN');
          await client.query(statement.text, statement.params);
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
} else {
  console.log('Skipping the PostgreSQL server event store contract: CTX_TEST_PG_URL is not set.');
  describe.skip('EventStore contract: postgres on a PostgreSQL server (CTX_TEST_PG_URL not set)', () => {
    it('needs CTX_TEST_PG_URL');
  });
}

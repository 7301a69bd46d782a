import { describe, it } from 'vitest';
import { connectPostgres, openPglite } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import { postgresDocumentProjection, postgresReadModels } from '../../infra/postgres/documentReadModels.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres.js';
import { POSTGRES_SERVER } from '../support/requirements.js';
import { describeProjectionSinkContract } from './projectionSink.contract.js';

for (const [engine, open] of [
  ['PGlite', () => openPglite()],
  ['PGlite in its own thread', () => openPgliteThread()],
] as const) {
  describeProjectionSinkContract(`postgres document read models on ${engine}`, async () => {
    const db = await open();
    return { run: (projection) => postgresDocumentProjection(db, projection), readModels: postgresReadModels(db), cleanup: () => db.close() };
  });
}

const serverUrl = testPostgresUrl();
if (serverUrl) {
  describeProjectionSinkContract('postgres document read models on a PostgreSQL server', async () => {
    const database = await createTestDatabase(serverUrl);
    const db = connectPostgres(database.url, { max: 4 });
    return {
      run: (projection) => postgresDocumentProjection(db, projection),
      readModels: postgresReadModels(db),
      cleanup: async () => {
        await db.close();
        await database.drop();
      },
    };
  });
} else {
  describe.skip(`ProjectionSink contract: PostgreSQL server (skipped: ${POSTGRES_SERVER.missing})`, () => {
    it('needs CTX_TEST_PG_URL');
  });
}

import { describe, it } from 'vitest';
import { openPglite } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import { postgresDocumentProjection, postgresReadModels } from '../../infra/postgres/documentReadModels.js';
import { connectTestDatabase, testPostgresUrl } from '../support/postgres.js';
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
    const { db, close } = await connectTestDatabase(serverUrl);
    return { run: (projection) => postgresDocumentProjection(db, projection), readModels: postgresReadModels(db), cleanup: close };
  });
} else {
  describe.skip(`ProjectionSink contract: PostgreSQL server (skipped: ${POSTGRES_SERVER.missing})`, () => {
    it('needs CTX_TEST_PG_URL');
  });
}

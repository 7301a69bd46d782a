import { describe, it } from 'vitest';
import { openPglite } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { createPgvectorIndex, openPgvectorSnapshot } from '../../infra/search/pgvectorIndex.js';
import { semanticIndexProjection } from '../../projections/search/semanticIndex.js';
import { describeVectorIndexContract, wordAxesEmbedder } from './vectorIndex.contract.js';
import { connectTestDatabase, serverWith } from '../support/postgres.js';

for (const [engine, open] of [
  ['PGlite', () => openPglite()],
  ['PGlite in its own thread', () => openPgliteThread()],
] as const) {
  describeVectorIndexContract(`pgvector (HNSW) on ${engine}`, async () => {
    const db = await open();
    const content = await createPostgresContentStore(db);
    const { projection, index } = await createPgvectorIndex(db, content, semanticIndexProjection(wordAxesEmbedder));
    return { index, sink: projection.live, content, cleanup: () => db.close() };
  });
}

describeVectorIndexContract('pgvector snapshot (exact scan) on PGlite', async () => {
  const db = await openPglite();
  const content = await createPostgresContentStore(db);
  await createPgvectorIndex(db, content, semanticIndexProjection(wordAxesEmbedder));
  await db.exec('CREATE SCHEMA contract_snapshot');
  const snapshot = await openPgvectorSnapshot(db, content, semanticIndexProjection(wordAxesEmbedder), 'contract_snapshot');
  return { index: snapshot.index, sink: snapshot.sink, seal: () => snapshot.seal(), content, cleanup: () => db.close() };
});

const server = await serverWith('vector');
if ('url' in server) {
  describeVectorIndexContract('pgvector (HNSW) on a PostgreSQL server', async () => {
    const { db, close } = await connectTestDatabase(server.url);
    const content = await createPostgresContentStore(db);
    const { projection, index } = await createPgvectorIndex(db, content, semanticIndexProjection(wordAxesEmbedder));
    return { index, sink: projection.live, content, cleanup: close };
  });
} else {
  console.log(`skipped: pgvector on a PostgreSQL server — ${server.skipped}`);
  describe.skip(`VectorIndex contract: pgvector on a PostgreSQL server (skipped: ${server.skipped})`, () => {
    it('needs a server with pgvector at CTX_TEST_PG_URL');
  });
}

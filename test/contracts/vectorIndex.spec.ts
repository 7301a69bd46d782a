import { openPglite } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { createPgvectorIndex, openPgvectorSnapshot } from '../../infra/search/pgvectorIndex.js';
import { semanticIndexProjection } from '../../projections/search/semanticIndex.js';
import { describeVectorIndexContract, wordAxesEmbedder } from './vectorIndex.contract.js';

// The PostgreSQL server on these machines has no pgvector: both adapters run on PGlite.
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

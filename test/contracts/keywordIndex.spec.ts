import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { openPglite } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { connectMeilisearch, createMeiliKeywordIndex } from '../../infra/search/meiliKeywordIndex.js';
import { createPgTextsearchKeywordIndex } from '../../infra/search/pgTextsearchKeywordIndex.js';
import { keywordIndexProjection } from '../../projections/search/keywordIndex.js';
import { describeKeywordIndexContract } from './keywordIndex.contract.js';
import { reachableMeilisearch } from './meiliServer.js';
import { connectTestDatabase, serverWith } from '../support/postgres.js';

for (const [engine, open] of [
  ['PGlite', () => openPglite()],
  ['PGlite in its own thread', () => openPgliteThread()],
] as const) {
  describeKeywordIndexContract(`pg_textsearch on ${engine}`, async () => {
    const db = await open();
    const content = await createPostgresContentStore(db);
    const { projection, index } = await createPgTextsearchKeywordIndex(db, content, keywordIndexProjection);
    return { projection, index, content, cleanup: () => db.close() };
  });
}

const server = await serverWith('pg_textsearch');
if ('url' in server) {
  // On a server the copy a rebuild fills gets its BM25 index in bulk at the swap, not as it loads.
  describeKeywordIndexContract('pg_textsearch on a PostgreSQL server', async () => {
    const { db, close } = await connectTestDatabase(server.url);
    const content = await createPostgresContentStore(db);
    const { projection, index } = await createPgTextsearchKeywordIndex(db, content, keywordIndexProjection);
    return { projection, index, content, cleanup: close };
  });
} else {
  console.log(`skipped: pg_textsearch on a PostgreSQL server — ${server.skipped}`);
  describe.skip(`KeywordIndex contract: pg_textsearch on a PostgreSQL server (skipped: ${server.skipped})`, () => {
    it('needs a server with pg_textsearch at CTX_TEST_PG_URL');
  });
}

const meili = await reachableMeilisearch();
if ('url' in meili) {
  console.log(`KeywordIndex contract: meilisearch ran against ${meili.url}`);
  describeKeywordIndexContract('meilisearch', async () => {
    const db = await openPglite();
    const content = await createPostgresContentStore(db);
    const client = connectMeilisearch(meili);
    const indexUid = `ctx_contract_${randomUUID().replace(/-/g, '')}`;
    const { projection, index } = await createMeiliKeywordIndex({ client, db, content, keyword: keywordIndexProjection, indexUid });
    return {
      projection,
      index,
      content,
      cleanup: async () => {
        await client.deleteIndexIfExists(indexUid);
        await client.deleteIndexIfExists(`${indexUid}__shadow`);
        await db.close();
        await meili.stop();
      },
    };
  });
} else {
  console.log(`skipped: no Meilisearch reachable — ${meili.skipped}`);
  describe.skip('KeywordIndex contract: meilisearch (skipped: no Meilisearch reachable)', () => {
    it('needs MEILI_URL or a Docker engine');
  });
}

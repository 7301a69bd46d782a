import { afterAll, beforeAll, expect, it } from 'vitest';
import { modelEnv } from '../support/ledger.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';
import { describeWith, EMBEDDING_MODEL } from '../support/requirements.js';

const model = modelEnv();

describeWith(EMBEDDING_MODEL, 'POST /api/v1/search with an embedding model', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer({ CTX_EMBEDDINGS__PROVIDER: 'local', ...model });
    await ingest(api, 'acme', [
      { source_id: 'garage.md', title: 'Garage notes', body: 'Change the engine oil of the car every ten thousand kilometres.' },
      { source_id: 'kitchen.md', title: 'Kitchen notes', body: 'Bake the bread at two hundred degrees for forty minutes.' },
    ]);
  }, 120_000);
  afterAll(async () => api?.close());

  it('ranks by meaning as well as by words (hybrid), as the REST API asks', async () => {
    const response = await api.call('POST', '/search', {
      token: api.token(ALL_SCOPES, 'acme'),
      body: { query: 'automobile maintenance', top_k: 1 },
    });
    expect(response.status).toBe(200);
    // No word of the query is in either document: only the semantic half of hybrid search finds it.
    expect((response.body.results as { metadata: { path: string } }[]).map((r) => r.metadata.path)).toEqual(['garage.md']);
  });
});

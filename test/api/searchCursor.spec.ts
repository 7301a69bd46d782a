import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';

interface Page {
  results: { metadata: { document_id: string } }[];
  pagination: { has_more: boolean; next_cursor: string | null; total_results: number };
}

/** Search cursors while documents are written between pages. */
describe('/api/v1/search cursors', () => {
  let api: ApiServer;
  const tenant = 'initech';

  beforeAll(async () => {
    api = await startApiServer();
    await ingest(
      api,
      tenant,
      Array.from({ length: 30 }, (_, i) => ({
        source_id: `docs/ledger-${i}.md`,
        body: `ledger reconciliation ${'ledger '.repeat(i % 7)}note ${i}`,
      })),
    );
  });
  afterAll(() => api.close());

  const page = async (token: string, cursor?: string) => {
    const response = await api.call('POST', '/search', {
      token,
      body: { query: 'ledger reconciliation', pagination: { limit: 10, ...(cursor ? { cursor } : {}) } },
    });
    expect(response.status).toBe(200);
    return response.body as unknown as Page;
  };

  it('pages through the ranking of the first page, however many documents are written between pages', async () => {
    const token = api.token(ALL_SCOPES, tenant);
    const first = await page(token);
    const seen = first.results.map((r) => r.metadata.document_id);
    let cursor = first.pagination.next_cursor;
    let written = 0;
    while (cursor) {
      // Stronger matches than any already there: a ranking recomputed now would start with them.
      await ingest(
        api,
        tenant,
        Array.from({ length: 5 }, () => ({
          source_id: `docs/new-${++written}.md`,
          body: 'ledger reconciliation ledger reconciliation ledger reconciliation',
        })),
      );
      const next = await page(token, cursor);
      seen.push(...next.results.map((r) => r.metadata.document_id));
      cursor = next.pagination.next_cursor;
    }
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
    // A new search sees the new documents.
    expect((await page(token)).pagination.total_results).toBe(30 + written);
  });

  it('refuses a cursor handed to another tenant', async () => {
    const first = await page(api.token(ALL_SCOPES, tenant));
    const other = await api.call('POST', '/search', {
      token: api.token(ALL_SCOPES, 'hooli'),
      body: { query: 'ledger reconciliation', pagination: { limit: 10, cursor: first.pagination.next_cursor! } },
    });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });
});

import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../infra/postgres/database.js';
import { createPinnedRankings } from '../../infra/postgres/pinnedRankings.js';
import { tempDataDir } from '../support/ledger.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';

interface Page {
  results: { metadata: { document_id: string } }[];
  pagination: { has_more: boolean; next_cursor: string | null; total_results: number };
}

const QUERY = 'ledger reconciliation';

const notes = (count: number, prefix = 'docs/ledger') =>
  Array.from({ length: count }, (_, i) => ({
    source_id: `${prefix}-${i}.md`,
    body: `ledger reconciliation ${'ledger '.repeat(i % 7)}note ${i}`,
  }));

const searchPage = async (api: ApiServer, token: string, cursor?: string, body: Record<string, unknown> = {}) => {
  const response = await api.call('POST', '/search', {
    token,
    body: { query: QUERY, pagination: { limit: 10, ...(cursor ? { cursor } : {}) }, ...body },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as unknown as Page;
};

const idsOf = (page: Page) => page.results.map((r) => r.metadata.document_id);

/** Search cursors while documents are written between pages. */
describe('/api/v1/search cursors', () => {
  let api: ApiServer;
  const tenant = 'initech';

  beforeAll(async () => {
    api = await startApiServer();
    await ingest(api, tenant, notes(30));
  });
  afterAll(() => api.close());

  const page = (token: string, cursor?: string, body?: Record<string, unknown>) => searchPage(api, token, cursor, body);

  it('pages through the ranking of the first page, however many documents are written between pages', async () => {
    const token = api.token(ALL_SCOPES, tenant);
    const first = await page(token);
    const seen = idsOf(first);
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
      expect(next.pagination.total_results).toBe(30);
      seen.push(...idsOf(next));
      cursor = next.pagination.next_cursor;
    }
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
    // A new search sees the new documents.
    expect((await page(token)).pagination.total_results).toBe(30 + written);
  });

  it('says in total_results, has_more and next_cursor what paging serves, also when the configured cap cuts the ranking', async () => {
    const globex = 'globex';
    const token = api.token(ALL_SCOPES, globex);
    await ingest(api, globex, [
      ...notes(25),
      ...Array.from({ length: 4 }, (_, i) => ({ source_id: `docs/other-${i}.md`, body: `quarterly forecast ${i}` })),
    ]);
    await ingest(api, globex, notes(3, 'general'), 'slack');

    // The response schema the server publishes (OpenAPI 3.0: `nullable` where a field may be null).
    const openapi = (await api.call('GET', '/openapi.json')).body as {
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    const matchesOpenApi = new Ajv({ strict: false }).compile(openapi.components.schemas.SearchResponse!);

    /** Every page of a search, each checked against the metadata it came with and the published schema. */
    const everyPage = async (body: Record<string, unknown>) => {
      const pages = [await page(token, undefined, body)];
      while (pages.at(-1)!.pagination.next_cursor) pages.push(await page(token, pages.at(-1)!.pagination.next_cursor!, body));
      const served = pages.flatMap(idsOf);
      for (const [i, { pagination }] of pages.entries()) {
        const last = i === pages.length - 1;
        expect(matchesOpenApi(pages[i]), JSON.stringify(matchesOpenApi.errors)).toBe(true);
        expect(pagination.total_results).toBe(served.length);
        expect(pagination.has_more).toBe(!last);
        expect(pagination.next_cursor === null).toBe(last);
      }
      expect(new Set(served).size).toBe(served.length);
      return served;
    };
    expect(await everyPage({})).toHaveLength(28);
    expect(await everyPage({ filters: { source_types: ['slack'] } })).toHaveLength(3);

    const capped = await api.call('PATCH', '/config', { token, body: { search: { max_results: 12, default_top_k: 5 } } });
    expect(capped.status, JSON.stringify(capped.body)).toBe(200);
    // Only the configured cap is ranked, and so only the cap is counted.
    expect(await everyPage({})).toHaveLength(12);
    const one = await api.call('POST', '/search', { token, body: { query: QUERY, top_k: 100 } });
    expect(one.body.pagination).toEqual({ has_more: false, next_cursor: null, total_results: 12 });
  });

  it('refuses a cursor handed to another tenant', async () => {
    const first = await page(api.token(ALL_SCOPES, tenant));
    const other = await api.call('POST', '/search', {
      token: api.token(ALL_SCOPES, 'hooli'),
      body: { query: QUERY, pagination: { limit: 10, cursor: first.pagination.next_cursor! } },
    });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });

  it('answers a cursor to a ranking it does not know with 400, telling the client to search again', async () => {
    const token = api.token(ALL_SCOPES, tenant);
    const issued = (await page(token)).pagination.next_cursor!;
    const decoded = JSON.parse(Buffer.from(issued, 'base64url').toString('utf8')) as Record<string, unknown>;
    const unknown = Buffer.from(JSON.stringify({ ...decoded, ranking: crypto.randomUUID() })).toString('base64url');
    const response = await api.call('POST', '/search', {
      token,
      body: { query: QUERY, pagination: { limit: 10, cursor: unknown } },
    });
    expect(response.status).toBe(400);
    const { error } = response.body as { error: { code: string; detail: string } };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.detail).toMatch(/expired or is unknown.*run the search again/);
  });
});

describe('/api/v1/search cursors across a restart', () => {
  it('pages on after the server restarts on the same data directory', async () => {
    const dataDir = tempDataDir('ctx-api-');
    const tenant = 'initech';
    let api = await startApiServer({}, undefined, dataDir);
    let seen: string[];
    let cursor: string;
    try {
      await ingest(api, tenant, notes(25));
      const first = await searchPage(api, api.token(ALL_SCOPES, tenant));
      seen = idsOf(first);
      cursor = first.pagination.next_cursor!;
    } finally {
      await api.close();
    }
    api = await startApiServer({}, undefined, dataDir);
    try {
      const token = api.token(ALL_SCOPES, tenant);
      let next: string | null = cursor;
      while (next) {
        const page = await searchPage(api, token, next);
        expect(page.pagination.total_results).toBe(25);
        seen.push(...idsOf(page));
        next = page.pagination.next_cursor;
      }
      expect(new Set(seen).size).toBe(25);
      expect(seen).toHaveLength(25);
    } finally {
      await api.close();
    }
  });
});

describe('pinned rankings', () => {
  it('forgets a ranking once it expires, and keeps each to its owner', async () => {
    const db = await openPglite();
    try {
      let now = Date.parse('2026-01-01T00:00:00Z');
      const rankings = await createPinnedRankings<string>(db, { ttlMs: 60_000, now: () => now });
      const id = await rankings.pin('acme', { ranking: ['a', 'b'] });
      expect(await rankings.get(id, 'acme')).toEqual({ ranking: ['a', 'b'] });
      expect(await rankings.get(id, 'hooli')).toBeUndefined();
      now += 60_001;
      expect(await rankings.get(id, 'acme')).toBeUndefined();
      // Pinning another prunes the expired one.
      await rankings.pin('acme', { ranking: [] });
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_pinned_rankings');
      expect(row?.n).toBe(1);
    } finally {
      await db.close();
    }
  });
});

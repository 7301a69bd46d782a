import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/ledger.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';

const anyString = expect.any(String) as unknown;
const anyNumber = expect.any(Number) as unknown;

const root = tempDataDir('ctx-api-roots-');
mkdirSync(path.join(root, 'repo', 'src'), { recursive: true });
writeFileSync(
  path.join(root, 'repo', 'src', 'billing.ts'),
  'export function chargeInvoice(invoice) { return invoice.total }\n',
);
symlinkSync('/etc', path.join(root, 'escape'));

describe('/api/v1 endpoints', () => {
  let api: ApiServer;
  let n = 0;
  /** A fresh user per call site, so that rate limits of one test never reach another. */
  const as = (scopes = ALL_SCOPES, tenant = 'acme') => api.token(scopes, tenant, `user-${++n}`);

  beforeAll(async () => {
    api = await startApiServer({ CTX_INGEST__ROOTS: root });
    await ingest(api, 'acme', [
      {
        source_id: 'src/api/routes/users.ts',
        title: 'users routes',
        body: 'router.post("/login", authenticateUser) // user authentication',
        updated_at: '2025-06-01T00:00:00Z',
      },
      {
        source_id: 'src/api/routes/session.ts',
        title: 'session',
        body: 'export const sessionAuthentication = () => user authentication session',
        updated_at: '2025-03-01T00:00:00Z',
      },
      {
        source_id: 'src/auth/jwt.ts',
        title: 'jwt user authentication',
        body: 'export function signToken(user) { /* user authentication PROJ-123 */ }',
        updated_at: '2024-01-01T00:00:00Z',
      },
      ...Array.from({ length: 25 }, (_, i) => ({
        source_id: `docs/auth-${i}.md`,
        title: `Auth note ${i}`,
        body: `user authentication note number ${i}`,
      })),
    ]);
    await ingest(
      api,
      'acme',
      [
        {
          source_id: 'C123/1700000000.1',
          title: 'dev channel',
          body: 'slack talk about user authentication',
        },
      ],
      'slack:dev',
    );
    await ingest(api, 'globex', [
      { source_id: 'src/secret.ts', title: 'globex secret', body: 'globex user authentication internals' },
    ]);
  });
  afterAll(() => api.close());

  describe('POST /search', () => {
    it("answers in the REST API's shape with query metadata", async () => {
      const response = await api.call('POST', '/search', {
        token: as(),
        body: { query: 'user authentication' },
      });
      expect(response.status).toBe(200);
      const body = response.body as {
        results: { source: string; score: number; metadata: object }[];
        pagination: object;
        query_metadata: object;
      };
      expect(body.results.length).toBe(20);
      expect(body.results[0]).toMatchObject({ source: anyString, content: anyString, score: 1 });
      expect(body.pagination).toMatchObject({ has_more: true, next_cursor: anyString, total_results: 29 });
      expect(body.query_metadata).toMatchObject({ execution_time_ms: anyNumber, sources_searched: 2 });
    });

    it('boosts the active file, its neighbours and open tickets', async () => {
      const response = await api.call('POST', '/search', {
        token: as(),
        body: {
          query: 'user authentication',
          work_context: { active_file: 'src/api/routes/users.ts', git_branch: 'feat/PROJ-123-login' },
        },
      });
      const results = (response.body as { results: { metadata: { path: string; boosted_by: string[] } }[] })
        .results;
      expect(results[0]!.metadata).toMatchObject({
        path: 'src/api/routes/users.ts',
        boosted_by: ['active_file'],
      });
      expect(results.slice(0, 3).map((r) => r.metadata.path)).toEqual(
        expect.arrayContaining(['src/api/routes/session.ts', 'src/auth/jwt.ts']),
      );
      expect(results.find((r) => r.metadata.path === 'src/auth/jwt.ts')!.metadata.boosted_by).toEqual([
        'ticket:PROJ-123',
      ]);
    });

    it('pages with a cursor until has_more is false', async () => {
      const token = as();
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const response = await api.call('POST', '/search', {
          token,
          body: { query: 'user authentication', pagination: { limit: 10, ...(cursor ? { cursor } : {}) } },
        });
        const body = response.body as {
          results: { metadata: { document_id: string } }[];
          pagination: { has_more: boolean; next_cursor: string | null };
        };
        seen.push(...body.results.map((r) => r.metadata.document_id));
        if (!body.pagination.has_more) break;
        cursor = body.pagination.next_cursor!;
      }
      expect(seen.length).toBe(29);
      expect(new Set(seen).size).toBe(29);
    });

    it('filters by source type and date range', async () => {
      const token = as();
      const slack = await api.call('POST', '/search', {
        token,
        body: { query: 'user authentication', filters: { source_types: ['slack'] } },
      });
      expect(
        (slack.body.results as { metadata: { source_type: string } }[]).map((r) => r.metadata.source_type),
      ).toEqual(['slack']);
      const dated = await api.call('POST', '/search', {
        token,
        body: {
          query: 'user authentication',
          filters: { date_range: { from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:59:59Z' } },
        },
      });
      expect(
        (dated.body.results as { metadata: { path: string } }[]).map((r) => r.metadata.path).sort(),
      ).toEqual(['src/api/routes/session.ts', 'src/api/routes/users.ts']);
    });

    it.each([
      ['an empty query', { query: '' }],
      ['top_k over 100', { query: 'x', top_k: 101 }],
      ['an unknown source type', { query: 'x', filters: { source_types: ['fax'] } }],
      ['a forged cursor', { query: 'x', pagination: { cursor: 'eyJwYWdlIjoxfQ' } }],
      ['an unknown field', { query: 'x', limit: 5 }],
    ])('answers 400 to %s', async (_name, body) => {
      const response = await api.call('POST', '/search', { token: as(), body });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    });

    it('treats injection attempts as plain text', async () => {
      const token = as();
      for (const query of [
        "'; DROP TABLE events; --",
        "x' OR '1'='1",
        'user) OR 1=1 --',
        '$$; SELECT pg_sleep(5); $$',
      ]) {
        const response = await api.call('POST', '/search', {
          token,
          body: { query, work_context: { active_file: "'; DELETE FROM rm_documents; --" } },
        });
        expect(response.status).toBe(200);
      }
      const still = await api.call('POST', '/search', { token, body: { query: 'user authentication' } });
      expect((still.body.pagination as { total_results: number }).total_results).toBe(29);
    });
  });

  it('suggests titles, symbols and frequent terms of the tenant only', async () => {
    const response = await api.call('GET', '/search/suggestions?q=auth&limit=5', {
      token: as(['search:read']),
    });
    expect(response.status).toBe(200);
    const suggestions = response.body.suggestions as string[];
    expect(suggestions.length).toBe(5);
    expect(suggestions.every((s) => s.toLowerCase().includes('auth'))).toBe(true);
    const globex = await api.call('GET', '/search/suggestions?q=globex', { token: as(['search:read']) });
    expect(globex.body.suggestions).toEqual([]);
  });

  it('reports status for the tenant', async () => {
    const response = await api.call('GET', '/status', { token: as(['index:read']) });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      indexing: { status: 'idle', documents_indexed: 29, connectors_active: anyNumber },
      performance: { avg_query_latency_ms: anyNumber, queries_per_minute: anyNumber, error_rate: anyNumber },
    });
  });

  describe('connectors', () => {
    it('creates, reads, updates and deletes a connector, never showing or recording its token', async () => {
      const token = as();
      const created = await api.call('POST', '/connectors', {
        token,
        body: {
          type: 'slack',
          name: 'Dev Team Channel',
          config: { workspace: 'w', channels: ['dev'], token: 'xoxb-very-secret' },
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        type: 'slack',
        name: 'Dev Team Channel',
        status: 'configuring',
        created_at: anyString,
      });
      const id = created.body.id as string;

      const read = await api.call('GET', `/connectors/${id}`, { token });
      expect(read.body).toMatchObject({
        id,
        config: { workspace: 'w', channels: ['dev'], token: '***' },
        stats: { documents_indexed: 0, last_error: null },
      });
      const listed = await api.call('GET', '/connectors', { token });
      expect(JSON.stringify(listed.body)).not.toContain('xoxb');

      const updated = await api.call('PUT', `/connectors/${id}`, {
        token,
        body: { name: 'Renamed', config: { workspace: 'w', token: 'xoxb-rotated' } },
      });
      expect(updated.body).toMatchObject({ id, status: 'reconfiguring' });
      expect((await api.call('GET', `/connectors/${id}`, { token })).body).toMatchObject({
        name: 'Renamed',
        status: 'reconfiguring',
        config: { token: '***' },
      });

      const events = await api.ledger.store.readStream(`connector-${id}`);
      expect(events.map((e) => e.type)).toEqual(['ConnectorAdded', 'ConnectorUpdated']);
      const recorded = JSON.stringify(events.map((e) => e.data));
      expect(recorded).not.toContain('xoxb');
      expect(recorded).toContain('"sealed"');
      expect(events[0]!.metadata.actor).toMatchObject({ tenant: 'acme', via: 'rest' });

      const removed = await api.call('DELETE', `/connectors/${id}`, { token });
      expect(removed.status).toBe(204);
      expect((await api.call('GET', `/connectors/${id}`, { token })).status).toBe(404);
    });

    it.each([
      ['a parent-directory root', { root: '../outside' }],
      ['an absolute root', { roots: ['/etc'] }],
      ['a symlink out of the root', { root: 'escape' }],
      ['a nested parent segment', { path: 'repo/../../x' }],
    ])('refuses %s', async (_name, config) => {
      const response = await api.call('POST', '/connectors', {
        token: as(),
        body: { type: 'filesystem', name: 'bad', config },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    });

    it("hides another tenant's connectors: 404 on read, update and delete", async () => {
      const mine = await api.call('POST', '/connectors', {
        token: as(),
        body: { type: 'jira', name: 'Tickets', config: {} },
      });
      const id = mine.body.id as string;
      const theirs = as(ALL_SCOPES, 'globex');
      expect((await api.call('GET', `/connectors/${id}`, { token: theirs })).status).toBe(404);
      expect(
        (await api.call('PUT', `/connectors/${id}`, { token: theirs, body: { name: 'taken' } })).status,
      ).toBe(404);
      expect((await api.call('DELETE', `/connectors/${id}`, { token: theirs })).status).toBe(404);
      const listed = await api.call('GET', '/connectors', { token: theirs });
      expect((listed.body.connectors as { id: string }[]).map((c) => c.id)).not.toContain(id);
      expect((await api.call('GET', `/connectors/${id}`, { token: as() })).body).toMatchObject({
        name: 'Tickets',
      });
      expect((await api.call('GET', '/connectors/not-an-id', { token: as() })).status).toBe(404);
    });
  });

  describe('indexing', () => {
    it('starts a job over the tenant connector roots, reports it, and stops', async () => {
      const token = as();
      await api.call('POST', '/connectors', {
        token,
        body: { type: 'filesystem', name: 'repo', config: { root: 'repo' } },
      });
      const started = await api.call('POST', '/index/start', { token, body: { connectors: ['repo'] } });
      expect(started.status).toBe(202);
      expect(started.body).toMatchObject({
        job_id: anyString,
        status: expect.stringMatching(/queued|running/) as unknown,
      });
      const status = await api.call('GET', '/index/status', { token });
      expect(status.status).toBe(200);
      expect(['running', 'idle']).toContain(status.body.status);
      const stopped = await api.call('POST', '/index/stop', { token });
      expect(stopped.status).toBe(200);
      expect(['stopping', 'idle']).toContain(stopped.body.status);
      // The other tenant sees none of it.
      const theirs = await api.call('GET', '/index/status', { token: as(ALL_SCOPES, 'globex') });
      expect(theirs.body).toMatchObject({ status: 'idle', current_job: null, last_completed: null });
    });

    it('forces a reindex only with confirm_destructive: true', async () => {
      const token = as();
      const refused = await api.call('POST', '/index/force-reindex', {
        token,
        body: { confirm_destructive: false },
      });
      expect(refused.status).toBe(400);
      const missing = await api.call('POST', '/index/force-reindex', { token, body: {} });
      expect(missing.status).toBe(400);
    });

    it('refuses to start without connectors to index', async () => {
      const response = await api.call('POST', '/index/start', { token: as(ALL_SCOPES, 'initech'), body: {} });
      expect(response.status).toBe(400);
    });
  });

  describe('configuration', () => {
    it('reads, changes and records who changed what', async () => {
      const token = api.token(ALL_SCOPES, 'acme', 'config-admin');
      const before = await api.call('GET', '/config', { token });
      expect(before.body).toMatchObject({
        search: { max_results: 100, default_top_k: 20, enable_reranking: false },
        rate_limits: { search_per_minute: 100 },
      });
      const patched = await api.call('PATCH', '/config', { token, body: { search: { default_top_k: 5 } } });
      expect(patched.body).toEqual({ updated: ['search.default_top_k'], requires_restart: false });
      const search = await api.call('POST', '/search', {
        token: as(),
        body: { query: 'user authentication' },
      });
      expect((search.body.results as unknown[]).length).toBe(5);
      const events = await api.ledger.store.readAll({ filter: { eventTypes: ['ConfigChanged'] } });
      expect(events.at(-1)).toMatchObject({
        data: { changes: [{ path: 'search.default_top_k', value: 5 }], by: 'config-admin' },
      });
      const unchanged = await api.call('PATCH', '/config', { token, body: { search: { default_top_k: 5 } } });
      expect(unchanged.body).toEqual({ updated: [], requires_restart: false });
      await api.call('PATCH', '/config', { token, body: { search: { default_top_k: 20 } } });
    });

    it("keeps a tenant's settings to itself, and leaves rate limits to administrators", async () => {
      const tenantAdmin = api.token(['config:read', 'config:write', 'search:read'], 'acme', 'acme-config');
      const patched = await api.call('PATCH', '/config', { token: tenantAdmin, body: { search: { default_top_k: 3 } } });
      expect(patched.body).toEqual({ updated: ['search.default_top_k'], requires_restart: false });
      expect((await api.call('GET', '/config', { token: tenantAdmin })).body).toMatchObject({ search: { default_top_k: 3 } });
      expect((await api.call('GET', '/config', { token: as(ALL_SCOPES, 'globex') })).body).toMatchObject({
        search: { default_top_k: 20 },
      });
      const limits = await api.call('PATCH', '/config', {
        token: tenantAdmin,
        body: { rate_limits: { search_per_minute: 1 } },
      });
      expect(limits.status).toBe(403);
      expect(limits.body).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR' } });
      expect((await api.call('GET', '/config', { token: as(ALL_SCOPES, 'globex') })).body).toMatchObject({
        rate_limits: { search_per_minute: 100 },
      });
      await api.call('PATCH', '/config', { token: tenantAdmin, body: { search: { default_top_k: 20 } } });
    });

    it.each([
      ['an unknown setting', { search: { colour: 'red' } }],
      ['a value out of range', { search: { max_results: 1000 } }],
      ['a wrong type', { rate_limits: { search_per_minute: 'lots' } }],
      ['a setting read at start', { indexing: { batch_size: 10 } }],
      ['reranking where no reranker is configured', { search: { enable_reranking: true } }],
    ])('refuses %s', async (_name, body) => {
      const response = await api.call('PATCH', '/config', { token: as(), body });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    });
  });
});

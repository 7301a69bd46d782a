import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PER_OPERATION, ROUTE_SPECS, type RouteSpec } from '../../src/http/api/routeSpecs.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';

/** A request each endpoint accepts as input (what it then answers depends on the data). */
const SAMPLE: Record<string, { route: string; body?: unknown }> = {
  'GET /status': { route: '/status' },
  'POST /search': { route: '/search', body: { query: 'anything' } },
  'GET /search/suggestions': { route: '/search/suggestions?q=an' },
  'POST /index/start': { route: '/index/start', body: {} },
  'POST /index/stop': { route: '/index/stop' },
  'GET /index/status': { route: '/index/status' },
  'POST /index/force-reindex': { route: '/index/force-reindex', body: { confirm_destructive: true } },
  'GET /connectors': { route: '/connectors' },
  'POST /connectors': { route: '/connectors', body: { type: 'slack', name: 'Team', config: {} } },
  'GET /connectors/{id}': { route: `/connectors/${crypto.randomUUID()}` },
  'PUT /connectors/{id}': { route: `/connectors/${crypto.randomUUID()}`, body: { name: 'x' } },
  'DELETE /connectors/{id}': { route: `/connectors/${crypto.randomUUID()}` },
  'GET /config': { route: '/config' },
  'PATCH /config': { route: '/config', body: { search: { max_results: 50 } } },
  'GET /projections': { route: '/projections' },
  'POST /projections/{name}/rebuild': { route: '/projections/no-such-projection/rebuild' },
  'GET /jobs': { route: '/jobs' },
  'GET /audit/events': { route: '/audit/events?type=ChunkAnnotated&limit=5' },
  'GET /streams/{stream_id}': { route: `/streams/job-${crypto.randomUUID()}` },
  'POST /forget': { route: '/forget', body: { document_id: crypto.randomUUID(), reason: 'scope check' } },
};

/** Endpoints only the operator may call, whatever a tenant's scopes. */
const OPERATOR_ROUTES = new Set(['GET /projections', 'POST /projections/{name}/rebuild']);

/** Endpoints with a scope of their own; the operations route is checked below, per operation. */
const scoped = (ROUTE_SPECS).filter(
  (spec): spec is RouteSpec & { scope: Exclude<RouteSpec['scope'], typeof PER_OPERATION> } =>
    spec.scope !== null && spec.scope !== PER_OPERATION,
);

describe('scopes per endpoint', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer();
  });
  afterAll(() => api.close());

  it('has a sample request for every scoped endpoint', () => {
    expect(scoped.map((s) => `${s.method} ${s.url}`).sort()).toEqual(Object.keys(SAMPLE).sort());
  });

  describe.each(scoped.map((spec) => [`${spec.method} ${spec.url}`, spec] as const))('%s', (key, spec) => {
    const sample = SAMPLE[key]!;
    const subject = `user-${key.replace(/\W+/g, '-')}`;

    it(`needs credentials`, async () => {
      const response = await api.call(spec.method, sample.route, { body: sample.body });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR' } });
    });

    it(`answers 403 without ${spec.scope}, even with every other scope`, async () => {
      const token = api.token(
        ALL_SCOPES.filter((s) => s !== spec.scope),
        'acme',
        subject,
      );
      const response = await api.call(spec.method, sample.route, { token, body: sample.body });
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR', retryable: false } });
      expect((response.body.error as { detail: string }).detail).toContain(spec.scope!);
    });

    // Shared read models are the operator's: an admin of the default tenant.
    const tenant = OPERATOR_ROUTES.has(key) ? 'default' : 'acme';

    it(`is allowed with ${spec.scope} alone, by token and by API key`, async () => {
      const token = api.token([spec.scope!], tenant, subject);
      const byToken = await api.call(spec.method, sample.route, { token, body: sample.body });
      expect([401, 403]).not.toContain(byToken.status);
      const { key } = await api.apiKey([spec.scope!], tenant);
      const byKey = await api.call(spec.method, sample.route, { apiKey: key, body: sample.body });
      expect([401, 403]).not.toContain(byKey.status);
    });
  });
});

describe('the operations route', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer();
  });
  afterAll(() => api.close());

  const run = (name: string, body: unknown, credentials: { token?: string; apiKey?: string } = {}) =>
    api.call('POST', `/operations/${name}`, { ...credentials, body });

  it("needs credentials, then the operation's own scope", async () => {
    const anonymous = await run('sources', {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR' } });
    expect(anonymous.headers.get('x-correlation-id')).toBe((anonymous.body.error as { correlation_id: string }).correlation_id);

    const reader = api.token(['search:read'], 'acme');
    const sources = await run('sources', {}, { token: reader });
    expect(sources.status).toBe(200);
    expect(sources.body).toHaveProperty('sources');

    const denied = await run('keys.create', { scopes: ['admin'], tenant: 'acme' }, { token: reader });
    expect(denied.status).toBe(403);
    expect((denied.body.error as { detail: string }).detail).toContain("'admin'");
  });

  it('answers an unknown operation 404 and bad input 400, in the API error format', async () => {
    const admin = api.token(['admin'], 'acme');
    const unknown = await run('no.such.operation', {}, { token: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'NOT_FOUND_ERROR', detail: "No operation named 'no.such.operation'" } });
    const bad = await run('keys.create', { scopes: ['root'], tenant: 'acme' }, { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });

  it("keeps a tenant's administrator to its own tenant's keys and tokens", async () => {
    const admin = api.token(['admin'], 'acme');
    const own = await run('keys.create', { scopes: ['search:read'], tenant: 'acme' }, { token: admin });
    expect(own.status).toBe(200);
    const other = await run('keys.create', { scopes: ['admin'], tenant: 'globex' }, { token: admin });
    expect(other.status).toBe(403);
    const tokens = await run('tokens.issue', { subject: 'bot', scopes: ['admin'], tenant: 'globex' }, { token: admin });
    expect(tokens.status).toBe(403);
    const listed = await run('keys.list', {}, { token: admin });
    expect((listed.body.keys as { tenant: string }[]).every((k) => k.tenant === 'acme')).toBe(true);
  });
});

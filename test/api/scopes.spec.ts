import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_SPECS, type RouteSpec } from '../../src/http/api/routeSpecs.js';
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

const scoped = (ROUTE_SPECS as readonly RouteSpec[]).filter((spec) => spec.scope !== null);

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

    it(`is allowed with ${spec.scope} alone, by token and by API key`, async () => {
      const token = api.token([spec.scope!], 'acme', subject);
      const byToken = await api.call(spec.method, sample.route, { token, body: sample.body });
      expect([401, 403]).not.toContain(byToken.status);
      const { key } = await api.apiKey([spec.scope!]);
      const byKey = await api.call(spec.method, sample.route, { apiKey: key, body: sample.body });
      expect([401, 403]).not.toContain(byKey.status);
    });
  });
});

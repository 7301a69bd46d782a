import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';

const CHUNKS = [0, 1].map((i) => ({ chunk_id: `c${i}`, position: i, text: `chunk ${i}` }));

type Paths = Record<string, Record<string, { 'x-required-scope'?: string; 'x-rate-limit-class'?: string }>>;

describe('annotation sessions mounted from the operation catalogue', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer();
  }, 300_000);
  afterAll(() => api.close());

  it('documents every annotation route in openapi.json with its scope and rate class', async () => {
    const { body } = await api.call('GET', '/openapi.json');
    const paths = body.paths as Paths;
    const base = '/annotations/sessions';
    for (const [path, method, scope, rateClass] of [
      [base, 'post', 'index:write', 'write'],
      [`${base}/{id}/annotations`, 'post', 'index:write', 'write'],
      [`${base}/{id}/annotations/batch`, 'post', 'index:write', 'write'],
      [`${base}/{id}/relations`, 'post', 'index:write', 'write'],
      [`${base}/{id}/progress`, 'get', 'index:read', 'read'],
      [`${base}/{id}/export`, 'get', 'index:read', 'read'],
      [`${base}/{id}/history`, 'get', 'index:read', 'read'],
      [`${base}/{id}/diff`, 'get', 'index:read', 'read'],
    ] as const) {
      expect(paths[path]?.[method], `${method} ${path}`).toMatchObject({
        'x-required-scope': scope,
        'x-rate-limit-class': rateClass,
      });
    }
  });

  it('limits an annotation route like every other route: 429 with Retry-After and the rate-limit headers', async () => {
    const admin = api.token(ALL_SCOPES, 'default', 'limits-admin');
    await api.call('PATCH', '/config', { token: admin, body: { rate_limits: { write_per_minute: 2 } } });
    try {
      const token = api.token(ALL_SCOPES, 'acme', 'busy-annotator');
      const responses = [];
      for (let i = 0; i < 3; i++)
        responses.push(await api.call('POST', '/annotations/sessions', { token, body: { config: { chunks: CHUNKS } } }));
      expect(responses.map((r) => r.status)).toEqual([201, 201, 429]);
      expect(responses[0]!.headers.get('x-ratelimit-limit')).toBe('2');
      const limited = responses[2]!;
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(limited.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
      expect(limited.body).toMatchObject({ error: { code: 'RATE_LIMIT_ERROR' } });
    } finally {
      await api.call('PATCH', '/config', { token: admin, body: { rate_limits: { write_per_minute: 600 } } });
    }
  });
});

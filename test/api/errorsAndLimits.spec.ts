import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiMetrics } from '../../src/http/api/apiMetrics.js';
import { apiPlugin, type ApiHandlers } from '../../src/http/api/apiPlugin.js';
import { OPEN_PRINCIPAL } from '../../src/http/api/authenticator.js';
import { ROUTE_SPECS } from '../../src/http/api/routeSpecs.js';
import { createRateLimits } from '../../src/http/rateLimits.js';
import { SEED_RATE_LIMITS } from '../support/ledger.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';

const anyString = expect.any(String) as unknown;
const anyNumber = expect.any(Number) as unknown;

const UUID = /^[0-9a-f-]{36}$/;

describe('errors and rate limits of /api/v1', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer(SEED_RATE_LIMITS);
  });
  afterAll(() => api.close());

  describe('error format', () => {
    it('gives every error a correlation id, in the body and the X-Correlation-Id header', async () => {
      const response = await api.call('GET', '/connectors');
      expect(response.status).toBe(401);
      const error = response.body.error as Record<string, unknown>;
      expect(Object.keys(error).sort()).toEqual([
        'code',
        'correlation_id',
        'detail',
        'docs_url',
        'message',
        'retryable',
      ]);
      expect(error.correlation_id).toMatch(UUID);
      expect(response.headers.get('x-correlation-id')).toBe(error.correlation_id);
      expect(error.docs_url).toBe('/docs/errors#authentication');
    });

    it("links each error to its section of the server's own error page", async () => {
      const page = await fetch(new URL('/docs/errors', api.url));
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await page.text();
      for (const section of ['validation', 'authentication', 'authorization', 'not-found', 'rate-limit', 'internal', 'service-unavailable'])
        expect(html).toContain(`<h2 id="${section}">${section}</h2>`);
    });

    it('keeps a correlation id the client sends, on success and on error', async () => {
      const ok = await api.call('GET', '/health', { headers: { 'x-correlation-id': 'client-req-42' } });
      expect(ok.headers.get('x-correlation-id')).toBe('client-req-42');
      const failed = await api.call('GET', '/status', { headers: { 'x-correlation-id': 'client-req-43' } });
      expect(failed.body).toMatchObject({ error: { correlation_id: 'client-req-43' } });
    });

    it('replaces a correlation id that does not look like one', async () => {
      const response = await api.call('GET', '/status', {
        headers: { 'x-correlation-id': '<script>alert(1)</script>' },
      });
      expect((response.body.error as { correlation_id: string }).correlation_id).toMatch(UUID);
    });

    it('answers malformed JSON with 400', async () => {
      const response = await api.call('POST', '/search', {
        token: api.token(ALL_SCOPES, 'acme', 'json'),
        raw: '{"query": "x",',
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        error: { code: 'VALIDATION_ERROR', detail: 'The request body is not valid JSON' },
      });
    });

    it('answers a JSON body that is not an object with 400, and a body that is not JSON with 415', async () => {
      const token = api.token(ALL_SCOPES, 'acme', 'shapes');
      const array = await api.call('POST', '/search', { token, raw: '[{"query": "x"}]' });
      expect(array.status).toBe(400);
      expect(array.body).toMatchObject({
        error: { code: 'VALIDATION_ERROR', detail: 'The request body must be a JSON object of the fields the route takes' },
      });
      const text = await api.call('POST', '/search', { token, raw: '{"query": "x"}', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      expect(text.body).toMatchObject({
        error: { code: 'UNSUPPORTED_MEDIA_TYPE_ERROR', detail: 'Only application/json bodies are accepted' },
      });
    });

    it('answers bodies over the limit with 413', async () => {
      const response = await api.call('POST', '/search', {
        token: api.token(ALL_SCOPES, 'acme', 'big'),
        body: { query: 'x'.repeat(2 * 1024 * 1024) },
      });
      expect(response.status).toBe(413);
      expect(response.body).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE_ERROR' } });
    });

    it('answers unknown endpoints with 404 in the same format', async () => {
      const response = await api.call('GET', '/nothing/here');
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ error: { code: 'NOT_FOUND_ERROR', correlation_id: anyString } });
    });

    it("keeps the tool API's format outside /api/v1", async () => {
      const response = await fetch(`${api.server.url}/nothing`);
      expect(await response.json()).toEqual({
        error: { code: 'not_found', message: 'No route GET /nothing' },
      });
    });

    it('logs unexpected errors with the correlation id and shows only INTERNAL_ERROR', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
      const app = Fastify({ loggerInstance: logger });
      const failing = Object.fromEntries(
        ROUTE_SPECS.map((spec) => [
          `${spec.method} ${spec.url}`,
          () => Promise.reject(new Error('connection string postgres://admin:hunter2@db')),
        ]),
      ) as unknown as ApiHandlers;
      await app.register(apiPlugin, {
        prefix: '/api/v1',
        authenticator: { enabled: false, jwt: null, authenticate: () => Promise.resolve(OPEN_PRINCIPAL) },
        handlers: failing,
        limits: createRateLimits().limits,
        metrics: createApiMetrics(),
        openapi: () => ({}),
        bodyLimitBytes: 1024,
        operationNeeds: () => null,
      });
      const response = await app.inject({
        method: 'GET',
        url: '/api/v1/health',
        headers: { 'x-correlation-id': 'trace-1' },
      });
      expect(response.statusCode).toBe(500);
      expect(response.body).not.toContain('hunter2');
      expect(response.json()).toMatchObject({
        error: { code: 'INTERNAL_ERROR', correlation_id: 'trace-1', retryable: false },
      });
      expect(lines.some((line) => line.includes('trace-1') && line.includes('hunter2'))).toBe(true);
      await app.close();
    });
  });

  describe('rate limits', () => {
    it('sends X-RateLimit headers with the reset as a Unix timestamp', async () => {
      const before = Math.floor(Date.now() / 1000);
      const response = await api.call('POST', '/search', {
        token: api.token(ALL_SCOPES, 'headers', 'headers'),
        body: { query: 'x' },
      });
      expect(response.headers.get('x-ratelimit-limit')).toBe('100');
      expect(response.headers.get('x-ratelimit-remaining')).toBe('99');
      // When the bucket is full again, rounded up to the second: 0.6 s after a request at 100 a minute.
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(before);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 2);
    });

    it('answers the request over the limit with 429, Retry-After and the seed body', async () => {
      const token = api.token(ALL_SCOPES, 'spam', 'config-spammer');
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await api.call('GET', '/config', { token })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const limited = await api.call('GET', '/config', { token });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(limited.body).toMatchObject({
        error: {
          code: 'RATE_LIMIT_ERROR',
          message: 'Rate limit exceeded',
          retryable: true,
          retry_after: anyNumber,
          correlation_id: anyString,
        },
      });
      expect((limited.body.error as { detail: string }).detail).toMatch(
        /^Too many requests\. Try again in \d+ seconds\.$/,
      );
      // The budget is per tenant and per class: another tenant, or another class, is unaffected.
      expect((await api.call('GET', '/config', { token: api.token(ALL_SCOPES, 'acme', 'someone-else') })).status).toBe(200);
      expect((await api.call('GET', '/connectors', { token })).status).toBe(200);
    });

    it('gives each endpoint the limit the REST API lists', async () => {
      const token = api.token(ALL_SCOPES, 'indexing', 'index-user');
      const status = await api.call('GET', '/status', { token });
      const indexStatus = await api.call('GET', '/index/status', { token });
      expect(status.headers.get('x-ratelimit-limit')).toBe('10');
      expect(status.headers.get('x-ratelimit-remaining')).toBe('9');
      expect(indexStatus.headers.get('x-ratelimit-limit')).toBe('30');
      expect(indexStatus.headers.get('x-ratelimit-remaining')).toBe('29');
      const suggestions = await api.call('GET', '/search/suggestions?q=a', { token });
      expect(suggestions.headers.get('x-ratelimit-limit')).toBe('50');
      const patch = await api.call('PATCH', '/config', { token, body: {} });
      expect(patch.headers.get('x-ratelimit-limit')).toBe('2');
    });

    it('sends the rate-limit headers on refusals too (400, 401, 403)', async () => {
      const before = Math.floor(Date.now() / 1000);
      const refusals = [
        await api.call('POST', '/search', { token: api.token(ALL_SCOPES, 'acme', 'bad-input'), body: { query: '' } }),
        await api.call('POST', '/search', { token: 'not.a.token', body: { query: 'x' } }),
        await api.call('POST', '/search', { token: api.token(['index:read'], 'acme', 'no-scope'), body: { query: 'x' } }),
      ];
      expect(refusals.map((r) => r.status)).toEqual([400, 401, 403]);
      for (const refusal of refusals) {
        expect(refusal.headers.get('x-ratelimit-limit')).toBe('100');
        expect(Number(refusal.headers.get('x-ratelimit-remaining'))).toBeLessThan(100);
        expect(Number(refusal.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(before);
      }
    });

    it('never limits /health', async () => {
      const responses = await Promise.all(Array.from({ length: 150 }, () => api.call('GET', '/health')));
      expect(responses.every((r) => r.status === 200)).toBe(true);
      expect(responses[0]!.headers.get('x-ratelimit-limit')).toBeNull();
    });

    it('applies a changed limit at once', async () => {
      const admin = api.token(ALL_SCOPES, 'default', 'limits-admin');
      await api.call('PATCH', '/config', {
        token: admin,
        body: { rate_limits: { connectors_per_minute: 2 } },
      });
      const token = api.token(ALL_SCOPES, 'acme', 'connectors-user');
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await api.call('GET', '/connectors', { token })).status);
      expect(statuses).toEqual([200, 200, 429]);
      await api.call('PATCH', '/config', {
        token: admin,
        body: { rate_limits: { connectors_per_minute: 20 } },
      });
    });
  });

  describe('OpenAPI', () => {
    it('serves the committed document, generated from the route schemas', async () => {
      const served = await api.call('GET', '/openapi.json');
      expect(served.status).toBe(200);
      expect(served.body).toEqual(
        JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')),
      );
    });

    it('describes every endpoint with its scope, and every reference resolves', () => {
      const document = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as {
        openapi: string;
        paths: Record<string, Record<string, { security: unknown[]; 'x-required-scope'?: string }>>;
        components: { schemas: Record<string, unknown> };
      };
      expect(document.openapi).toBe('3.0.3');
      for (const spec of ROUTE_SPECS) {
        const operation = document.paths[spec.url]?.[spec.method.toLowerCase()];
        expect(operation, `${spec.method} ${spec.url}`).toBeDefined();
        expect(operation!['x-required-scope']).toBe(spec.scope ?? undefined);
      }
      const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
        (m) => m[1]!,
      );
      expect(refs.length).toBeGreaterThan(20);
      for (const ref of refs) expect(document.components.schemas, ref).toHaveProperty(ref);
    });
  });
});

import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/server';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { openTestLedger } from '../support/ledger.js';
import { rawRequest } from '../support/rawHttp.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const SESSION = { name: 'forged', config: { chunks: [{ chunk_id: 'c0', position: 0, text: 'x' }] } };

const API_ERROR = (code: string) => ({ error: { code, correlation_id: expect.any(String) as unknown } });

describe('HTTP server hardening', () => {
  describe('with authentication on', () => {
    let api: ApiServer;
    const send = (method: string, path: string, options?: Parameters<typeof rawRequest>[3]) =>
      rawRequest(api.server.url, method, path, options);

    beforeAll(async () => {
      api = await startApiServer({ CTX_SERVER__TOOLS_PER_MINUTE: '3', CTX_SERVER__MCP_PER_MINUTE: '3' });
    });
    afterAll(() => api.close());

    it.each([
      ['POST', '/%74ools/ingest', { paths: ['/x'] }],
      ['POST', '/%74ools/search', { query: 'x' }],
      ['GET', '/%74ools/list', undefined],
      ['GET', '/%74ools/sources', undefined],
      ['GET', '/%61gents/list', undefined],
      ['POST', '/%61gents/any/prompt', {}],
      ['GET', '/%6detrics', undefined],
    ])('refuses %s %s without credentials, in the tool API format', async (method, path, body) => {
      const response = await send(method, path, { body });
      expect(response.status).toBe(401);
      expect(response.json()).toEqual({
        error: { code: 'unauthorized', message: expect.any(String) as unknown },
      });
    });

    it('refuses encoded spellings of /api/v1 and MCP routes without credentials, each in its format', async () => {
      for (const [method, path, body] of [
        ['POST', '/api/v1/%61nnotations/sessions', SESSION],
        ['GET', '/api/v1/annotations/sessions/%61bc/progress', undefined],
        ['POST', '/api/v1/%73earch', { query: 'x' }],
        ['GET', '/api/v1/%63onfig', undefined],
      ] as const) {
        const response = await send(method, path, { body });
        expect(response.status, path).toBe(401);
        expect(response.json()).toMatchObject(API_ERROR('AUTHENTICATION_ERROR'));
      }
      const mcp = await send('POST', '/%6dcp', { body: INITIALIZE, headers: MCP_HEADERS });
      expect(mcp.status).toBe(401);
      expect(mcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    });

    it('starts no annotation session for a request it refuses', async () => {
      const before = await api.ledger.store.headPosition();
      expect((await send('POST', '/api/v1/%61nnotations/sessions', { body: SESSION })).status).toBe(401);
      expect(await api.ledger.store.headPosition()).toEqual(before);
    });

    it.each(['/health', '/admin', '/admin/console.js', '/api/v1/health', '/api/v1/openapi.json'])(
      'keeps %s public',
      async (path) => {
        expect((await send('GET', path)).status).toBe(200);
      },
    );

    it('limits the tool API per tenant, answering 429 with Retry-After', async () => {
      const token = api.token(ALL_SCOPES, 'acme', 'tools-spammer');
      const list = (bearer: string) =>
        send('GET', '/tools/list', { headers: { authorization: `Bearer ${bearer}` } });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await list(token)).status);
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await list(token);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['x-ratelimit-limit']).toBe('3');
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(limited.json()).toEqual({
        error: { code: 'rate_limited', message: expect.stringMatching(/^Too many requests/) as unknown },
      });
      // The budget is the tenant's: the same path spelled differently counts with it, another tenant apart.
      expect(
        (await send('GET', '/%74ools/list', { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(429);
      expect((await list(api.token(ALL_SCOPES, 'acme', 'someone-else'))).status).toBe(429);
      expect((await list(api.token(ALL_SCOPES, 'globex', 'someone-else'))).status).toBe(200);
    });

    it('limits MCP over HTTP per tenant, answering 429 in JSON-RPC', async () => {
      const headers = {
        ...MCP_HEADERS,
        authorization: `Bearer ${api.token(ALL_SCOPES, 'acme', 'mcp-spammer')}`,
      };
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await send('POST', '/mcp', { body: INITIALIZE, headers })).status);
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await send('POST', '/mcp', { body: INITIALIZE, headers });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { message: expect.stringMatching(/^Too many requests/) as unknown },
      });
    });

    it('answers a path parameter over 100 characters with 414 in the surface format', async () => {
      const long = 'x'.repeat(150);
      const rest = await send('GET', `/api/v1/connectors/${long}`);
      expect(rest.status).toBe(414);
      expect(rest.json()).toMatchObject(API_ERROR('URI_TOO_LONG_ERROR'));
      const tools = await send('POST', `/tools/${long}`, { body: {} });
      expect(tools.status).toBe(414);
      expect(tools.json()).toMatchObject({ error: { code: 'uri_too_long' } });
    });

    it.each([
      ['TRACE', '/mcp', 'GET, HEAD, POST, DELETE, OPTIONS'],
      ['PUT', '/mcp', 'GET, HEAD, POST, DELETE, OPTIONS'],
      ['TRACE', '/tools/search', 'POST, OPTIONS'],
      ['GET', '/tools/search', 'POST, OPTIONS'],
      ['TRACE', '/health', 'GET, HEAD, OPTIONS'],
    ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
      const response = await send(method, path);
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe(allow);
    });

    it('serves the error documentation to no frame, and every answer unsniffed', async () => {
      const docs = await send('GET', '/docs/errors');
      expect(docs.status).toBe(200);
      expect(docs.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      for (const [method, path] of [
        ['GET', '/docs/errors'],
        ['GET', '/health'],
        ['GET', '/admin'],
        ['GET', '/api/v1/openapi.json'],
        ['POST', '/tools/search'],
        ['GET', '/nowhere'],
      ] as const) {
        const response = await send(method, path);
        expect(response.headers['x-content-type-options'], `${method} ${path}`).toBe('nosniff');
      }
    });

    it('answers an unsupported method under /api/v1 with 405 in its format', async () => {
      const response = await send('TRACE', '/api/v1/search');
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST, OPTIONS');
      expect(response.json()).toMatchObject(API_ERROR('METHOD_NOT_ALLOWED_ERROR'));
    });
  });

  describe('on loopback with authentication off', () => {
    let ledger: Ledger;
    let server: RunningServer;
    const send = (method: string, path: string, options?: Parameters<typeof rawRequest>[3]) =>
      rawRequest(server.url, method, path, options);
    const port = () => new URL(server.url).port;

    beforeAll(async () => {
      ledger = await openTestLedger({
        CTX_SERVER__ALLOWED_HOSTS: 'ctx.example.test, Other.Example.Test',
        CTX_SERVER__CORS_ORIGINS: 'https://app.example.test',
      });
      server = await startServer(ledger);
    });
    afterAll(() => server.close());

    it("sends a browser opening the server's address to the admin console", async () => {
      const page = await send('GET', '/', { headers: { accept: 'text/html' } });
      expect(page.status).toBe(302);
      expect(page.headers.location).toBe('/admin');
      expect((await send("GET", String(page.headers.location))).status).toBe(200);
    });

    it('tells an MCP client asking for an event stream at / that there is none (405)', async () => {
      const stream = await send('GET', '/', { headers: { accept: 'text/event-stream' } });
      expect(stream.status).toBe(405);
      expect(stream.headers.allow).toBe('POST');
    });

    describe('refuses a Host it is not known by (DNS rebinding)', () => {
      const host = () => `rebind.attacker.example:${port()}`;

      it('on /mcp, in JSON-RPC', async () => {
        const response = await send('POST', '/mcp', {
          body: INITIALIZE,
          headers: { ...MCP_HEADERS, host: host() },
        });
        expect(response.status).toBe(403);
        expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
      });

      it('on /tools/search, in the tool API format', async () => {
        const response = await send('POST', '/tools/search', {
          body: { query: 'x' },
          headers: { host: host() },
        });
        expect(response.status).toBe(403);
        expect(response.json()).toMatchObject({ error: { code: 'forbidden' } });
      });

      it('on /api/v1, in its format', async () => {
        const response = await send('POST', '/api/v1/search', {
          body: { query: 'x' },
          headers: { host: host() },
        });
        expect(response.status).toBe(403);
        expect(response.json()).toMatchObject(API_ERROR('AUTHORIZATION_ERROR'));
      });

      it('on a public route', async () => {
        expect((await send('GET', '/health', { headers: { host: host() } })).status).toBe(403);
      });
    });

    it.each(['localhost', '127.0.0.1', '[::1]', 'ctx.example.test', 'other.example.test'])(
      'answers requests for host %s, on any port',
      async (name) => {
        const response = await send('POST', '/mcp', {
          body: INITIALIZE,
          headers: { ...MCP_HEADERS, host: `${name}:${port()}` },
        });
        expect(response.status).toBe(200);
        expect((await send('GET', '/health', { headers: { host: `${name}:1` } })).status).toBe(200);
      },
    );

    it('refuses a page of another origin, and executes nothing it posts', async () => {
      const evil = { origin: 'http://evil.example' };
      const read = await send('GET', '/tools/sources', { headers: evil });
      expect(read.status).toBe(403);
      expect(read.headers['access-control-allow-origin']).toBeUndefined();
      expect(read.json()).toMatchObject({ error: { code: 'forbidden' } });
      const before = await ledger.store.headPosition();
      const write = await send('POST', '/api/v1/annotations/sessions', { body: SESSION, headers: evil });
      expect(write.status).toBe(403);
      expect(write.headers['access-control-allow-origin']).toBeUndefined();
      expect(write.json()).toMatchObject(API_ERROR('AUTHORIZATION_ERROR'));
      const ingest = await send('POST', '/tools/documents.ingest', { body: { paths: ['/etc'] }, headers: evil });
      expect(ingest.status).toBe(403);
      const mcp = await send('POST', '/mcp', { body: INITIALIZE, headers: { ...MCP_HEADERS, ...evil } });
      expect(mcp.status).toBe(403);
      expect(await ledger.store.headPosition()).toEqual(before);
    });

    it('refuses a CORS preflight from another origin', async () => {
      const response = await send('OPTIONS', '/tools/search', {
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(response.status).toBe(403);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });

    it.each(['http://localhost:5173', 'http://127.0.0.1', 'https://app.example.test'])(
      'lets pages of %s call it, with CORS headers',
      async (origin) => {
        const response = await send('POST', '/tools/search', { body: { query: 'x' }, headers: { origin } });
        expect(response.status).toBe(200);
        expect(response.headers['access-control-allow-origin']).toBe(origin);
        const preflight = await send('OPTIONS', '/mcp', {
          headers: { origin, 'access-control-request-method': 'POST' },
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers['access-control-allow-origin']).toBe(origin);
      },
    );

    it('matches configured origins by scheme, host and port', async () => {
      for (const origin of ['http://app.example.test', 'https://app.example.test:8443', 'null']) {
        expect((await send('GET', '/tools/sources', { headers: { origin } })).status).toBe(403);
      }
    });

    it('lets a page the server itself serves call it by an allowed host name', async () => {
      const host = `ctx.example.test:${port()}`;
      const response = await send('GET', '/tools/sources', { headers: { host, origin: `http://${host}` } });
      expect(response.status).toBe(200);
    });
  });

  it('warns at start-up when every origin may call it', async () => {
    const lines: string[] = [];
    const app = await buildApp({
      logger: pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }),
      bodyLimitBytes: 1024,
      createMcpServer: () => new McpServer({ name: 't', version: '1' }),
      browsers: { allowedHosts: [], corsOrigins: ['*'] },
      rateLimits: { toolsPerMinute: 10, mcpPerMinute: 10 },
    });
    expect(lines.join('\n')).toMatch(/cors_origins allows every origin/);
    const response = await app.inject({
      method: 'GET',
      url: '/health',
      headers: { origin: 'https://anywhere.example' },
    });
    expect(response.headers['access-control-allow-origin']).toBe('https://anywhere.example');
    await app.close();
  });

  describe('configuration', () => {
    it('refuses to bind beyond loopback without allowed_hosts', () => {
      let error: unknown;
      try {
        loadConfig({ env: { CTX_SERVER__BIND: '0.0.0.0:7331' } });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n')).toMatch(
        /server\.allowed_hosts: binding beyond loopback needs allowed_hosts/,
      );
    });

    it('reads allowed_hosts and cors_origins from the environment as comma-separated lists', () => {
      const config = loadConfig({
        env: {
          CTX_SERVER__BIND: '0.0.0.0:7331',
          CTX_SERVER__ALLOWED_HOSTS: 'ctx.internal, CTX.Example.com',
          CTX_SERVER__CORS_ORIGINS: 'https://app.example.com/,*',
        },
      });
      expect(config.server.allowedHosts).toEqual(['ctx.internal', 'ctx.example.com']);
      expect(config.server.corsOrigins).toEqual(['https://app.example.com', '*']);
    });

    it('names a host or origin it cannot use', () => {
      expect(() => loadConfig({ env: { CTX_SERVER__ALLOWED_HOSTS: 'http://ctx.internal:80' } })).toThrow(
        /server\.allowed_hosts\[0\]/,
      );
      expect(() => loadConfig({ env: { CTX_SERVER__CORS_ORIGINS: 'https://app.example.com/path' } })).toThrow(
        /server\.cors_origins\[0\]/,
      );
    });
  });
});

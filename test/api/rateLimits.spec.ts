import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/rawHttp.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';
import { connectMcp } from '../support/mcp.js';

/**
 * Search limited to 2 a minute: one token comes back every 30 seconds, far longer than each test
 * takes, so that a spent budget is still spent when the test looks.
 */
const LOW_SEARCH = { CTX_SERVER__SEARCH_PER_MINUTE: '2' };

/** The four ways to search: REST's endpoint, the operations route, the tool API and MCP's tool. */
const searchers = (api: ApiServer, mcp: Client, headers: Record<string, string>) => ({
  rest: () => rawRequest(api.server.url, 'POST', '/api/v1/search', { headers, body: { query: 'limits' } }),
  operations: () => rawRequest(api.server.url, 'POST', '/api/v1/operations/search', { headers, body: { query: 'limits' } }),
  tools: () => rawRequest(api.server.url, 'POST', '/tools/search', { headers, body: { query: 'limits' } }),
  mcp: async () => {
    const result = (await mcp.callTool({ name: 'context.search', arguments: { query: 'limits' } })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    // A success is text for the agent; an error, the error object.
    const isError = result.isError ?? false;
    return { isError, body: isError ? (JSON.parse(result.content[0]!.text) as Record<string, unknown>) : {} };
  },
});

const expectRestLimited = (response: Awaited<ReturnType<typeof rawRequest>>) => {
  expect(response.status).toBe(429);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(response.headers['x-ratelimit-remaining']).toBe('0');
  expect(response.json()).toMatchObject({
    error: { code: 'RATE_LIMIT_ERROR', correlation_id: expect.any(String) as unknown, retry_after: expect.any(Number) as unknown },
  });
};

describe('rate limits: one budget per tenant and operation on every surface', () => {
  let api: ApiServer;
  const clients: Client[] = [];
  beforeAll(async () => {
    api = await startApiServer(LOW_SEARCH);
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await api.close();
  });

  const keyHeaders = async (tenant: string) => ({ 'x-api-key': (await api.apiKey(ALL_SCOPES, tenant)).key });
  const mcpFor = async (headers: Record<string, string>) => {
    const client = await connectMcp(api.server.url, headers);
    clients.push(client);
    return client;
  };

  it('shares search across /api/v1/search, the operations route, /tools/search and MCP, and across a tenant\'s keys', async () => {
    const first = await keyHeaders('acme');
    const second = await keyHeaders('acme');
    const [one, two] = [searchers(api, await mcpFor(first), first), searchers(api, await mcpFor(second), second)];

    // Spent by REST with one key and the tool API with the other...
    const rest = await one.rest();
    expect(rest.status).toBe(200);
    expect(rest.headers['x-ratelimit-limit']).toBe('2');
    expect(rest.headers['x-ratelimit-remaining']).toBe('1');
    const tools = await two.tools();
    expect(tools.status).toBe(200);
    expect(tools.headers['x-ratelimit-remaining']).toBe('0');

    // ... the budget is spent on every surface, whichever key asks.
    expectRestLimited(await one.operations());
    expectRestLimited(await two.rest());
    const toolsLimited = await one.tools();
    expect(toolsLimited.status).toBe(429);
    expect(Number(toolsLimited.headers['retry-after'])).toBeGreaterThan(0);
    expect(toolsLimited.json()).toEqual({ error: { code: expect.any(String) as unknown, message: expect.stringMatching(/^Too many requests/) as unknown } });
    const mcpLimited = await two.mcp();
    expect(mcpLimited.isError).toBe(true);
    // context.search answers in the tool API's codes, as /tools/search does.
    expect(mcpLimited.body).toMatchObject({ error: { code: 'rate_limited', message: expect.stringMatching(/^Too many requests/) as unknown } });
  });

  it('counts MCP tool calls and the operations route against the same budget', async () => {
    const headers = await keyHeaders('initech');
    const search = searchers(api, await mcpFor(headers), headers);
    expect((await search.mcp()).isError).toBe(false);
    expect((await search.operations()).status).toBe(200);
    expectRestLimited(await search.rest());
    expect((await search.tools()).status).toBe(429);
  });

  it('keeps tenants apart', async () => {
    const spent = await keyHeaders('umbrella');
    const search = searchers(api, await mcpFor(spent), spent);
    for (let i = 0; i < 2; i++) expect((await search.rest()).status).toBe(200);
    expectRestLimited(await search.rest());
    const other = await keyHeaders('globex');
    const response = await searchers(api, await mcpFor(other), other).rest();
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-remaining']).toBe('1');
  });
});

describe('rate limits without authentication', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer({ ...LOW_SEARCH, CTX_AUTH__MODE: 'off' });
  });
  afterAll(() => api.close());

  it('gives the local tenant one budget, whatever loopback address calls', async () => {
    const from = (localAddress: string) =>
      rawRequest(api.server.url, 'POST', '/api/v1/search', { body: { query: 'limits' }, localAddress });
    expect((await from('127.0.0.1')).status).toBe(200);
    expect((await from('127.0.0.2')).status).toBe(200);
    expectRestLimited(await from('127.0.0.3'));
    const tools = await rawRequest(api.server.url, 'POST', '/tools/search', { body: { query: 'limits' }, localAddress: '127.0.0.4' });
    expect(tools.status).toBe(429);
  });
});

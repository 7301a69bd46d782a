import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/rawHttp.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** A JSON body with an array nested `depth` deep inside it: a megabyte at 500,000. */
const deepBody = (depth: number, fields: Record<string, unknown> = {}) =>
  `${JSON.stringify(fields).slice(0, -1)}${Object.keys(fields).length ? ',' : ''}"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;

/** Metadata nested `depth` objects deep. */
const deepMetadata = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as Record<string, unknown>;

describe('malformed input is refused with 400 in each surface format', () => {
  let api: ApiServer;
  let headers: Record<string, string>;
  beforeAll(async () => {
    api = await startApiServer();
    headers = { authorization: `Bearer ${api.token(ALL_SCOPES, 'acme', 'malformed')}` };
  });
  afterAll(() => api.close());

  describe('a time whose UTC offset no place uses', () => {
    it('is refused in a search date range rather than failing in the database', async () => {
      const response = await rawRequest(api.server.url, 'POST', '/api/v1/search', {
        headers,
        body: { query: 'anything', filters: { date_range: { from: '0760-01-01T04:32:32-23:20' } } },
      });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', detail: expect.stringContaining('±14:00') as unknown } });
    });

    it('is refused in a document to ingest, and nothing of the batch is stored', async () => {
      const response = await rawRequest(api.server.url, 'POST', '/api/v1/documents/batch', {
        headers,
        body: {
          source: 'offsets',
          documents: [
            { source_id: 'fine', body: 'A document with a real time.', updated_at: '2026-03-12T15:07:40+01:00' },
            { source_id: 'far', body: 'A document from nowhere.', updated_at: '6295-03-12T15:07:40.0+22:47' },
          ],
        },
      });
      expect(response.status).toBe(400);
      const sources = await rawRequest(api.server.url, 'GET', '/tools/sources', { headers });
      expect(JSON.stringify(sources.json())).not.toContain('offsets');
    });
  });

  describe('a scalar query field given more than once', () => {
    it('is refused on /api/v1/audit/events, naming the field', async () => {
      const response = await rawRequest(api.server.url, 'GET', '/api/v1/audit/events?limit=1&limit=2', { headers });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({
        error: { code: 'VALIDATION_ERROR', detail: expect.stringContaining('limit') as unknown, correlation_id: expect.any(String) as unknown },
      });
    });

    it('is refused on another route, naming the field', async () => {
      const suggestions = await rawRequest(api.server.url, 'GET', '/api/v1/search/suggestions?q=a&q=b', { headers });
      expect(suggestions.status).toBe(400);
      expect(suggestions.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', detail: expect.stringContaining('q') as unknown } });
    });

    it('still takes a field that is a list repeated', async () => {
      const response = await rawRequest(
        api.server.url,
        'GET',
        '/api/v1/audit/events?type=ApiKeyCreated&type=ConfigChanged&limit=1',
        { headers },
      );
      expect(response.status).toBe(200);
    });
  });

  describe('JSON nested 500,000 deep', () => {
    const body = deepBody(500_000, { query: 'x' });

    it('is refused on /tools/search', async () => {
      const response = await rawRequest(api.server.url, 'POST', '/tools/search', {
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({ error: { code: 'bad_request', message: expect.stringMatching(/nested/) as unknown } });
    });

    it('is refused on /api/v1/operations/search', async () => {
      const response = await rawRequest(api.server.url, 'POST', '/api/v1/operations/search', {
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({
        error: { code: 'VALIDATION_ERROR', detail: expect.stringMatching(/nested/) as unknown, correlation_id: expect.any(String) as unknown },
      });
    });

    it('is refused on /mcp', async () => {
      const response = await rawRequest(api.server.url, 'POST', '/mcp', { headers: { ...headers, ...MCP_HEADERS }, body });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/nested/) as unknown } });
    });

    it('is refused however its strings hide brackets, and JSON nested within the limit is taken', async () => {
      const tricky = `{"query":"x","s":"]]]]\\"]]]","deep":${'['.repeat(101)}${']'.repeat(101)}}`;
      const refused = await rawRequest(api.server.url, 'POST', '/tools/search', {
        headers: { ...headers, 'content-type': 'application/json' },
        body: tricky,
      });
      expect(refused.status).toBe(400);
      const fine = await rawRequest(api.server.url, 'POST', '/tools/search', {
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'x', filters: { repo: '[[[[' } }),
      });
      expect(fine.status).toBe(200);
    });
  });

  describe('metadata nested deep in documents.ingest_batch', () => {
    const batch = (depth: number) => ({
      source: 'filesystem',
      documents: [{ source_id: 'deep.md', body: 'deep', metadata: deepMetadata(depth) }],
    });

    it('is refused at 3,000 deep on /api/v1/operations', async () => {
      const response = await rawRequest(api.server.url, 'POST', '/api/v1/operations/documents.ingest_batch', {
        headers,
        body: batch(3_000),
      });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    });

    it('is refused over MCP beyond the metadata depth limit, naming the field, and nothing is stored', async () => {
      const client = new Client({ name: 'malformed-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), { requestInit: { headers } }));
      try {
        const result = (await client.callTool({ name: 'documents.ingest_batch', arguments: batch(40) })) as {
          isError?: boolean;
          content: { text: string }[];
        };
        expect(result.isError).toBe(true);
        expect(JSON.parse(result.content[0]!.text)).toMatchObject({
          error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('metadata') as unknown },
        });
        const shallow = (await client.callTool({ name: 'documents.ingest_batch', arguments: batch(5) })) as { isError?: boolean };
        expect(shallow.isError ?? false).toBe(false);
      } finally {
        await client.close();
      }
      const stored = await api.ledger.store.readAll({ filter: { eventTypes: ['DocumentIngested'] } });
      expect(stored.filter((e) => (e.data as { sourceId?: string }).sourceId === 'deep.md')).toHaveLength(1);
    });
  });
});

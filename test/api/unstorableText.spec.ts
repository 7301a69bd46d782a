import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Position } from '../../src/domain/position.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';

/** Text no read model can store: a NUL, and a high surrogate with no low one after it. */
const NUL = 'bad\u0000text';
const LONE = 'bad\ud800text';

const CHUNKS = [0, 1].map((i) => ({ chunk_id: `c${i}`, position: i, text: `chunk ${i}` }));

describe('text a read model cannot store, on every surface', () => {
  let api: ApiServer;
  let token: string;
  let mcp: Client;
  let connectorId: string;
  let sessionId: string;

  /** What was appended since `from`, leaving out the calls `/tools` records about itself. */
  const appendedSince = async (from: Position) =>
    (await api.ledger.store.readAll({ from, maxCount: 1000 })).filter((e) => e.type !== 'ToolCalled');
  const head = () => api.ledger.store.headPosition();

  const tools = async (name: string, body: unknown) => {
    const response = await fetch(`${api.server.url}/tools/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const callTool = async (name: string, args: Record<string, unknown>) =>
    (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };

  beforeAll(async () => {
    api = await startApiServer();
    token = api.token(ALL_SCOPES);
    mcp = new Client({ name: 'unstorable-text-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const created = await api.call('POST', '/connectors', {
      token,
      body: { type: 'slack', name: 'Team', config: { workspace: 'w', channels: ['dev'] } },
    });
    expect(created.status).toBe(201);
    connectorId = created.body.id as string;
    const started = await callTool('start_session', { config: { chunks: CHUNKS } });
    expect(started.isError).toBeFalsy();
    sessionId = (JSON.parse(started.content[0]!.text) as { sessionId: string }).sessionId;
  });
  afterAll(async () => {
    await mcp.close();
    await api.close();
  });

  it('REST refuses it in connector names and config values, in its error format, and appends nothing', async () => {
    const from = await head();
    const cases = [
      { method: 'POST', route: '/connectors', body: { type: 'slack', name: NUL, config: {} }, field: 'name' },
      {
        method: 'POST',
        route: '/connectors',
        body: { type: 'slack', name: 'ok', config: { workspace: LONE } },
        field: 'config.workspace',
      },
      { method: 'PUT', route: `/connectors/${connectorId}`, body: { name: NUL }, field: 'name' },
      {
        method: 'PUT',
        route: `/connectors/${connectorId}`,
        body: { config: { channels: ['dev', NUL] } },
        field: 'config.channels.1',
      },
    ];
    for (const { method, route, body, field } of cases) {
      const response = await api.call(method, route, { token, body });
      expect(response.status, `${method} ${route} ${field}`).toBe(400);
      expect(response.body).toMatchObject({
        error: { code: 'VALIDATION_ERROR', correlation_id: expect.any(String) as unknown },
      });
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect(await appendedSince(from)).toEqual([]);
    expect((await api.call('GET', `/connectors/${connectorId}`, { token })).body).toMatchObject({ name: 'Team' });
  });

  it('REST answers a search query holding a NUL with 400, not 500', async () => {
    const response = await api.call('POST', '/search', { token, body: { query: 'invoice\u0000total' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    expect(JSON.stringify(response.body)).toContain('query');
  });

  it('/tools refuses it in a document title, tag or body with 400 bad_request, and appends nothing', async () => {
    const from = await head();
    const documents = [
      { source_id: 'a.md', title: NUL, body: 'fine' },
      { source_id: 'b.md', tags: ['ok', LONE], body: 'fine' },
      { source_id: 'c.md', body: NUL },
    ];
    for (const [i, doc] of documents.entries()) {
      // A good document first: the bad one must stop the call before anything is ingested.
      const response = await tools('documents.ingest_batch', {
        source: 'notes',
        documents: [{ source_id: 'good.md', body: 'a good document' }, doc],
      });
      expect(response.status, `document ${i}`).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'bad_request' } });
      expect((response.body.error as { message: string }).message).toMatch(/documents\.1\.(title|tags\.1|body)/);
    }
    const search = await tools('search', { query: NUL });
    expect(search.status).toBe(400);
    expect(search.body).toMatchObject({ error: { code: 'bad_request' } });
    expect(await appendedSince(from)).toEqual([]);
  });

  it('MCP answers it with an error result naming the field, and appends nothing', async () => {
    const from = await head();
    const calls: [string, Record<string, unknown>, RegExp][] = [
      ['documents.ingest_batch', { source: 'notes', documents: [{ source_id: 'a.md', title: NUL, body: 'x' }] }, /documents\.0\.title/],
      [
        'context.connector_management',
        { action: 'add', connector_config: { type: 'slack', name: LONE, config: {} } },
        /connector_config\.name/,
      ],
      ['start_session', { name: NUL, config: { chunks: CHUNKS } }, /name/],
      ['start_session', { config: { chunks: [{ chunk_id: 'x', position: 0, text: LONE }] } }, /text/],
      ['annotate_chunk', { sessionId, chunkId: 'c0', notes: NUL }, /notes/],
      ['annotate_chunk', { sessionId, chunkId: 'c0', tags: [LONE] }, /tags\.0/],
      ['annotate_chunks', { sessionId, annotations: [{ chunkId: 'c1', summary: NUL }] }, /annotations\.0\.summary/],
      ['context.search', { query: NUL }, /query/],
    ];
    for (const [name, args, field] of calls) {
      const result = await callTool(name, args);
      expect(result.isError, name).toBe(true);
      expect(result.content[0]!.text, name).toMatch(field);
      expect(result.content[0]!.text, name).toMatch(/U\+0000 or unpaired surrogates/);
    }
    expect(await appendedSince(from)).toEqual([]);
  });
});

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { runCtx } from '../support/cli.js';

const CHUNKS = [0, 1].map((i) => ({ chunk_id: `c${i}`, position: i, text: `chunk ${i}` }));

describe('renaming an annotation session', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer({ CTX_MCP__TOOLSETS: 'annotations' });
  }, 300_000);
  afterAll(() => api.close());

  it('renames over MCP, REST and the CLI, and is in openapi.json', async () => {
    const token = api.token(ALL_SCOPES, 'acme', 'renamer');
    const created = await api.call('POST', '/annotations/sessions', { token, body: { config: { chunks: CHUNKS } } });
    const sessionId = created.body.sessionId as string;

    const client = new Client({ name: 'rename-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const viaMcp = await client.callTool({ name: 'annotations.rename_session', arguments: { sessionId, name: 'from MCP' } });
      expect(viaMcp.isError).toBeFalsy();
    } finally {
      await client.close();
    }

    const viaRest = await api.call('PATCH', `/annotations/sessions/${sessionId}`, { token, body: { name: 'from REST' } });
    expect(viaRest.status).toBe(200);
    expect(viaRest.body).toMatchObject({ sessionId, name: 'from REST' });

    const viaCli = await runCtx(['annotations', 'rename', sessionId, 'from the CLI', '--server', api.server.url, '--token', token]);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaCli.stdout).toContain('from the CLI');

    const history = await api.call('GET', `/annotations/sessions/${sessionId}/history`, { token });
    const renames = (history.body.events as { type: string; name?: string }[]).filter((e) => e.type === 'SessionRenamed');
    expect(renames.map((e) => e.name)).toEqual(['from MCP', 'from REST', 'from the CLI']);

    const paths = (await api.call('GET', '/openapi.json')).body.paths as Record<string, Record<string, object>>;
    expect(paths['/annotations/sessions/{id}']?.patch).toMatchObject({ 'x-required-scope': 'index:write' });
  });

  it('refuses an empty name and a session of another tenant, appending nothing', async () => {
    const acme = api.token(ALL_SCOPES, 'acme', 'renamer');
    const created = await api.call('POST', '/annotations/sessions', { token: acme, body: { config: { chunks: CHUNKS } } });
    const sessionId = created.body.sessionId as string;
    const stream = `annotation-${sessionId}`;
    const before = (await api.ledger.store.readStream(stream)).length;

    const empty = await api.call('PATCH', `/annotations/sessions/${sessionId}`, { token: acme, body: { name: '' } });
    expect(empty.status).toBe(400);
    const globex = api.token(ALL_SCOPES, 'globex', 'bob');
    const foreign = await api.call('PATCH', `/annotations/sessions/${sessionId}`, { token: globex, body: { name: 'mine' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: { code: 'not_found', message: `Session '${sessionId}' not found` } });
    expect(await api.ledger.store.readStream(stream)).toHaveLength(before);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Scope } from '../../src/domain/auth.js';
import { ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { EXAMPLES } from './extensionsLedger.js';

/** Searches the caller's project and answers the titles it found. */
const PROBE = `return {
  name = "probe",
  description = "Titles of documents about payments",
  parameters = { type = "object" },
  execute = function(params, ctx)
    local titles = {}
    for i, hit in ipairs(ctx.search("payments", { mode = "keyword" }).results) do titles[i] = hit.title end
    return { titles = titles }
  end,
}`;

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content.map((c) => c.text).join('\n');

describe('Lua tools and agents check the caller’s scopes on every surface, whenever they were added', () => {
  let api: ApiServer;
  let toolsDir: string;
  const clients: Client[] = [];

  const keyFor = async (scopes: readonly Scope[], tenant = 'acme') => (await api.apiKey(scopes, tenant)).key;
  const mcpAs = async (key: string) => {
    const client = new Client({ name: 'scopes', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }));
    clients.push(client);
    return client;
  };
  const restAs = async (key: string, route: string, body: unknown = {}) => {
    const response = await fetch(`${api.server.url}${route}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    toolsDir = mkdtempSync(path.join(tmpdir(), 'ctx-tools-'));
    api = await startApiServer({ CTX_EXTENSIONS__TOOLS_DIR: toolsDir, CTX_EXTENSIONS__AGENTS_DIR: path.join(EXAMPLES, 'agents') });
    await ingest(api, 'acme', [{ source_id: 'runbook.md', title: 'Payments runbook', body: 'How to restart the payments API' }]);
    // Added while the server runs: not an operation of the catalogue.
    writeFileSync(path.join(toolsDir, 'probe.lua'), PROBE);
    const admin = await mcpAs(await keyFor(['index:write', 'search:read']));
    await vi.waitFor(async () => expect((await admin.listTools()).tools.map((t) => t.name)).toContain('probe'), { timeout: 15_000, interval: 300 });
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.close();
    await api?.close();
  });

  it('refuses a search:read key the added tool over MCP, with the scope error and nothing of the index', async () => {
    const client = await mcpAs(await keyFor(['search:read']));
    const result = await client.callTool({ name: 'probe', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/AUTHORIZATION_ERROR.*needs the 'index:write' scope/);
    expect(textOf(result)).not.toContain('Payments runbook');
  });

  it('refuses the same key the same tool over /tools with 403', async () => {
    const { status, body } = await restAs(await keyFor(['search:read']), '/tools/probe');
    expect(status).toBe(403);
    expect(body).toEqual({ error: { code: 'forbidden', message: "This action needs the 'index:write' scope" } });
  });

  it('refuses ctx.search inside a tool whose caller lacks search:read, on both surfaces', async () => {
    const key = await keyFor(['index:write']);
    const rest = await restAs(key, '/tools/probe');
    expect(rest.status).toBe(500);
    expect(rest.body).toEqual({ error: { code: 'tool_error', message: expect.stringMatching(/probe\.lua:\d+: This action needs the 'search:read' scope/) as unknown } });
    const result = await (await mcpAs(key)).callTool({ name: 'probe', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/needs the 'search:read' scope/);
    expect(textOf(result)).not.toContain('Payments runbook');
  });

  it('answers a caller with both scopes from its own tenant’s project only', async () => {
    const acme = await keyFor(['index:write', 'search:read']);
    expect(await restAs(acme, '/tools/probe')).toEqual({ status: 200, body: { result: { titles: ['Payments runbook'] } } });
    const fromMcp = await (await mcpAs(acme)).callTool({ name: 'probe', arguments: {} });
    expect(fromMcp.isError).toBeFalsy();
    expect(textOf(fromMcp)).toContain('Payments runbook');
    const globex = await keyFor(['index:write', 'search:read'], 'globex');
    expect(await restAs(globex, '/tools/probe')).toEqual({ status: 200, body: { result: { titles: {} } } });
  });

  it('refuses a search:read key an agent’s prompt over MCP and /agents, and gives it to index:write', async () => {
    const reader = await keyFor(['search:read']);
    await expect((await mcpAs(reader)).getPrompt({ name: 'release_notes', arguments: { version: '1.2' } })).rejects.toThrow(
      /needs the 'index:write' scope/,
    );
    expect((await restAs(reader, '/agents/release_notes/prompt', { version: '1.2' })).status).toBe(403);
    const writer = await (await mcpAs(await keyFor(['index:write']))).getPrompt({ name: 'release_notes', arguments: { version: '1.2' } });
    expect(JSON.stringify(writer.messages)).toContain('version 1.2');
  });
});

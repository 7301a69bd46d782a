import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger, startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { modelEnv, tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { EMBEDDING_MODEL, itWith } from '../support/requirements.js';
import { assertToolApiShape } from '../support/toolApiSchemas.js';

/** A server as deployed: `[mcp] toolsets` as given (unset: the default toolset). */
const serveLedger = async (
  env: NodeJS.ProcessEnv = {},
  file?: string,
): Promise<{ ledger: Ledger; server: RunningServer }> => {
  const config = loadConfig({
    file,
    env: { ...modelEnv(), ...tempRootsEnv(), CTX_LOG__LEVEL: 'silent', ...env },
    overrides: { storage: { dataDir: tempDataDir('ctx-agent-') }, server: { bind: '127.0.0.1:0' } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  return { ledger, server: await startServer(ledger) };
};
const serve = async (env: NodeJS.ProcessEnv = {}) => (await serveLedger(env)).server;

const connect = async (server: RunningServer) => {
  const client = new Client({ name: 'agent-surface', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  return client;
};

const SEED_TOOLS = {
  '000': ['context.search', 'context.get', 'context.sources'],
  '002': ['context.search', 'context.get_related_info', 'context.index_control', 'context.connector_management'],
  '003': ['start_session', 'annotate_chunk', 'annotate_chunks', 'add_relation', 'get_progress', 'export_annotations'],
  '004': ['start_indexing_background', 'get_job_status', 'list_background_jobs', 'cancel_job'],
};

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;
const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('the MCP surface an agent sees', () => {
  let server: RunningServer;
  let client: Client;

  let documentId: string;

  beforeAll(async () => {
    const served = await serveLedger();
    server = served.server;
    const { ledger } = served;
    const { results } = (await ledger.operation('documents.ingest_batch').run(
      {
        source: 'notes',
        documents: [
          // Given with an offset: answers give that moment in UTC.
          { source_id: 'tokens.md', title: 'Tokens', body: 'Refresh tokens rotate on every use.', tags: ['auth'], updated_at: '2025-06-01T12:00:00+02:00' },
          { source_id: 'billing.md', title: 'Billing', body: 'Invoices are sent monthly; refresh tokens are unrelated.', tags: ['money'] },
        ],
      },
      { actor: { subject: 'test', tenant: null, via: 'cli' }, correlationId: crypto.randomUUID(), project: 'default' },
    )) as { results: { id: string }[] };
    documentId = results[0]!.id;
    await ledger.waitForProjections(await ledger.store.headPosition(), 60_000);
    client = await connect(server);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('lists a default toolset under 8k tokens (JSON characters / 4) with one search tool, get and sources', async () => {
    const listing = await client.listTools();
    const names = listing.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(SEED_TOOLS['000']));
    expect(names.filter((n) => /search/.test(n))).toEqual(['context.search']);
    const tokens = JSON.stringify(listing).length / 4;
    expect(tokens).toBeLessThan(8000);
  });

  it('lists date-time filters by format, without a pattern', async () => {
    const { tools } = await client.listTools();
    const search = JSON.stringify(tools.find((t) => t.name === 'context.search')?.inputSchema);
    expect(search).toContain('"format":"date-time"');
    expect(search).not.toContain('"pattern"');
  });


  itWith(EMBEDDING_MODEL, 'ranks a plain query hybrid when a model is loaded', async () => {
    const result = await client.callTool({ name: 'context.search', arguments: { query: 'refresh tokens' } });
    expect(structured(result)).toMatchObject({ mode: 'hybrid' });
    expect(structured(result)).not.toHaveProperty('mode_notice');
  });

  it("takes the tool API's request (mode, limit, filters) and answers the tool API's results", async () => {
    const result = await client.callTool({
      name: 'context.search',
      arguments: { query: 'refresh tokens', mode: 'keyword', limit: 5, filters: { tags: ['auth'], since: '2025-01-01T00:00:00Z' } },
    });
    expect(result.isError).toBeFalsy();
    const { mode, ...answer } = structured(result);
    expect(mode).toBe('keyword');
    assertToolApiShape('search', answer);
    expect((answer.results as { source_id: string; updated_at: string }[]).map((r) => [r.source_id, r.updated_at])).toEqual([
      ['tokens.md', '2025-06-01T10:00:00.000Z'],
    ]);
  });

  it("takes the REST API's request (top_k, work_context) and answers the REST API's results", async () => {
    const result = await client.callTool({
      name: 'context.search',
      arguments: { query: 'refresh tokens', top_k: 1, work_context: { active_file: 'billing.md' } },
    });
    expect(structured(result)).toMatchObject({
      results: [{ metadata: { path: 'billing.md', boosted_by: ['active_file'] } }],
      pagination: { has_more: true },
    });
  });

  it('refuses a request that mixes both, as an error result', async () => {
    const result = await client.callTool({ name: 'context.search', arguments: { query: 'tokens', limit: 2, top_k: 2 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not both/);
  });

  it("gets a document with the tool API's shape, its times in UTC", async () => {
    const result = await client.callTool({ name: 'context.get', arguments: { id: documentId } });
    expect(result.isError).toBeFalsy();
    assertToolApiShape('get', structured(result));
    expect(structured(result)).toMatchObject({ source_id: 'tokens.md', updated_at: '2025-06-01T10:00:00.000Z' });
  });

  it('lists every tool of /tools/list with its required parameters, as the tool API shows', async () => {
    const { tools } = (await (await fetch(`${server.url}/tools/list`)).json()) as {
      tools: { name: string; builtin: boolean; parameters: { type: string; required?: unknown } }[];
    };
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) expect([tool.name, tool.parameters.type, Array.isArray(tool.parameters.required)]).toEqual([tool.name, 'object', true]);
    expect(tools.find((t) => t.name === 'search')?.parameters.required).toEqual(['query']);
  });

  it("lists sources with the tool API's shape", async () => {
    const result = await client.callTool({ name: 'context.sources', arguments: {} });
    assertToolApiShape('sources', structured(result));
    expect(structured(result)).toMatchObject({ sources: [expect.objectContaining({ name: 'notes', configured: false })] });
  });
});

describe('engine://files directories', () => {
  let server: RunningServer;
  let client: Client;

  beforeAll(async () => {
    const served = await serveLedger({ CTX_EMBEDDINGS__PROVIDER: 'none' });
    server = served.server;
    await served.ledger.operation('documents.ingest_batch').run(
      {
        source: 'repo',
        documents: ['http/api/routes.ts', 'http/api/schemas.ts', 'http/api/v2/old.ts', 'http/app.ts', 'README.md'].map(
          (path) => ({ source_id: path, body: `// ${path}` }),
        ),
      },
      { actor: { subject: 'test', tenant: null, via: 'cli' }, correlationId: crypto.randomUUID(), project: 'default' },
    );
    await served.ledger.waitForProjections(await served.ledger.store.headPosition(), 60_000);
    client = await connect(server);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const read = async (uri: string) => (await client.readResource({ uri })).contents[0] as Record<string, unknown>;

  it("reads a directory's URI as the URIs of its entries, subdirectories first", async () => {
    expect(await read('engine://files/repo/http/api')).toEqual({
      uri: 'engine://files/repo/http/api/',
      mimeType: 'text/uri-list',
      text: ['engine://files/repo/http/api/v2/', 'engine://files/repo/http/api/routes.ts', 'engine://files/repo/http/api/schemas.ts'].join('\r\n'),
    });
    expect((await read('engine://files/repo/http/')).text).toBe(['engine://files/repo/http/api/', 'engine://files/repo/http/app.ts'].join('\r\n'));
    expect((await read('engine://files/repo/')).text).toBe(['engine://files/repo/http/', 'engine://files/repo/README.md'].join('\r\n'));
    expect((await read('engine://files/')).text).toBe('engine://files/repo/');
  });

  it('still reads a file, and refuses a path that is neither file nor directory', async () => {
    expect(await read('engine://files/repo/http/app.ts')).toMatchObject({ text: '// http/app.ts' });
    await expect(client.readResource({ uri: 'engine://files/repo/http/ap' })).rejects.toThrow(/No indexed file or directory repo\/http\/ap/);
    await expect(client.readResource({ uri: 'engine://files/repo/http/../etc' })).rejects.toThrow(/No indexed file|Refused/);
  });
});

describe('search without an embedding model', () => {
  it('answers a plain query by keyword, and says so', async () => {
    const server = await serve({ CTX_EMBEDDINGS__PROVIDER: 'none' });
    const client = await connect(server);
    try {
      const result = await client.callTool({ name: 'context.search', arguments: { query: 'tokens' } });
      expect(result.isError).toBeFalsy();
      expect(structured(result)).toMatchObject({ mode: 'keyword', mode_notice: expect.stringMatching(/keyword/) as unknown });
      expect(textOf(result)).toMatch(/Ranked by keyword search \(No embedding model is loaded/);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('a configured source that cannot be read', () => {
  it('answers NOT_CONFIGURED (not_configured on the tool API) to an ingest of it, and changes nothing', async () => {
    const file = path.join(tempDataDir('ctx-agent-config-'), 'ctx.toml');
    writeFileSync(file, '[sources.handbook]\nkind = "filesystem"\nroots = ["/nonexistent/handbook"]\n');
    const { ledger, server } = await serveLedger({ CTX_EMBEDDINGS__PROVIDER: 'none' }, file);
    const client = await connect(server);
    try {
      const head = await ledger.store.headPosition();
      const result = await client.callTool({ name: 'documents.ingest', arguments: { source: 'filesystem:handbook' } });
      expect(result.isError).toBe(true);
      expect(JSON.parse(textOf(result))).toMatchObject({
        error: { code: 'NOT_CONFIGURED', message: expect.stringMatching(/filesystem:handbook.*\/nonexistent\/handbook/) as unknown },
      });
      expect(await ledger.store.headPosition()).toBe(head);
      // The tool API keeps the tool API's lowercase codes.
      const tools = await fetch(`${server.url}/tools/documents.ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'filesystem:handbook' }),
      });
      expect(tools.status).toBe(400);
      expect(await tools.json()).toMatchObject({ error: { code: 'not_configured' } });
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('every seed by toolset', () => {
  it('serves each seed’s tools under their seed names with toolsets = all', async () => {
    const server = await serve({ CTX_MCP__TOOLSETS: 'all', CTX_EMBEDDINGS__PROVIDER: 'none' });
    const client = await connect(server);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(Object.values(SEED_TOOLS).flat()));
      expect(names.filter((n) => /search/.test(n))).toEqual(['context.search']);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('serves the annotation tools by the annotations toolset and the job tools by the jobs toolset', async () => {
    const server = await serve({ CTX_MCP__TOOLSETS: 'annotations,jobs', CTX_EMBEDDINGS__PROVIDER: 'none' });
    const client = await connect(server);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining([...SEED_TOOLS['003'], ...SEED_TOOLS['004']]));
      expect(names).not.toContain('context.search');
    } finally {
      await client.close();
      await server.close();
    }
  });
});

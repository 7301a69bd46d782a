import { Client, ResourceNotFoundError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/auth.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';

const anyString = expect.any(String) as unknown;

const connect = async (api: ApiServer, headers: Record<string, string> = {}) => {
  const client = new Client({ name: 'api-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), { requestInit: { headers } }),
  );
  return client;
};
const bearer = (api: ApiServer, scopes: readonly Scope[] = ALL_SCOPES, tenant = 'acme') => ({
  authorization: `Bearer ${api.token(scopes, tenant)}`,
});
const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
const structured = (result: unknown) =>
  (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe('MCP over Streamable HTTP with authentication', () => {
  let api: ApiServer;
  let acme: Client;
  let globex: Client;

  beforeAll(async () => {
    api = await startApiServer();
    await ingest(api, 'acme', [
      {
        source_id: 'src/billing/invoice.ts',
        title: 'invoice',
        body: 'export function chargeInvoice(invoice) { /* BILL-7 */ return invoice.total }',
      },
      {
        source_id: 'docs/billing.md',
        title: 'Billing guide',
        body: 'How chargeInvoice works with src/billing/invoice.ts and ticket BILL-7',
      },
      ...Array.from({ length: 120 }, (_, i) => ({
        source_id: `notes/n${String(i).padStart(3, '0')}.md`,
        body: `note ${i}`,
      })),
    ]);
    await ingest(api, 'globex', [
      {
        source_id: 'src/billing/invoice.ts',
        title: 'globex invoice',
        body: 'globex chargeInvoice secret sauce',
      },
    ]);
    acme = await connect(api, bearer(api));
    globex = await connect(api, bearer(api, ALL_SCOPES, 'globex'));
  });
  afterAll(async () => {
    await acme.close();
    await globex.close();
    await api.close();
  });

  it.each([
    ['no credentials', {}],
    ['a forged token', { authorization: 'Bearer abc.def.ghi' }],
    ['an unknown API key', { 'x-api-key': '0123456789abcdef0123456789abcdef' }],
  ])('refuses a client with %s (401)', async (_name, headers) => {
    await expect(connect(api, headers)).rejects.toThrow(
      /401|Unauthorized|Authentication|Invalid|Missing|Unknown/i,
    );
    const raw = await fetch(`${api.server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{}',
    });
    expect(raw.status).toBe(401);
  });

  it('accepts an API key as well as a bearer token', async () => {
    const { key } = await api.apiKey(['search:read']);
    const client = await connect(api, { 'x-api-key': key });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('context.search');
    await client.close();
  });

  it('lists the context.* tools', async () => {
    const names = (await acme.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'context.search',
        'context.get_related_info',
        'context.index_control',
        'context.connector_management',
      ]),
    );
  });

  it('context.search answers a text block for the LLM and structured results', async () => {
    const result = await acme.callTool({
      name: 'context.search',
      arguments: {
        query: 'chargeInvoice',
        work_context: { active_file: 'src/billing/invoice.ts' },
        top_k: 5,
      },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^Context for "chargeInvoice" \(2 of 2 results, 1 source\):/);
    expect(textOf(result)).toContain('[1] invoice — file://src/billing/invoice.ts');
    const output = structured(result) as { results: { metadata: { boosted_by: string[] } }[] };
    expect(output.results[0]!.metadata.boosted_by).toEqual(['active_file']);
  });

  it('context.search gives in its text the id of each result, for context.get, and scores to three decimals', async () => {
    for (const args of [{ query: 'chargeInvoice', top_k: 5 }, { query: 'chargeInvoice', limit: 5 }]) {
      const result = await acme.callTool({ name: 'context.search', arguments: args });
      const { results } = structured(result) as { results: ({ id: string } | { metadata: { document_id: string } })[] };
      const ids = results.map((r) => ('id' in r ? r.id : r.metadata.document_id));
      expect(ids).toHaveLength(2);
      const text = textOf(result);
      for (const id of ids) expect(text).toContain(`(id ${id})`);
      const scores = [...text.matchAll(/^score (\S+?),/gm)].map((m) => m[1]!);
      expect(scores).toHaveLength(2);
      for (const score of scores) expect(score).toMatch(/^\d+(\.\d{1,3})?$/);
      // The id in the text opens the document.
      const opened = await acme.callTool({ name: 'context.get', arguments: { id: /\(id ([0-9a-f-]{36})\)/.exec(text)![1] } });
      expect(opened.isError).toBeFalsy();
    }
    const one = await globex.callTool({ name: 'context.search', arguments: { query: 'chargeInvoice', limit: 5 } });
    expect(textOf(one)).toMatch(/^Context for "chargeInvoice" \(1 result\):/);
  });

  it('context.search tells the LLM how to read the next page, and the last page says no more', async () => {
    const first = await acme.callTool({ name: 'context.search', arguments: { query: 'chargeInvoice', top_k: 1 } });
    const cursor = (structured(first) as { pagination: { next_cursor: string } }).pagination.next_cursor;
    expect(textOf(first)).toMatch(/^Context for "chargeInvoice" \(1 of 2 results, 1 source\):/);
    expect(textOf(first)).toContain(`More results: pass pagination.cursor "${cursor}" for the next page.`);
    const last = await acme.callTool({
      name: 'context.search',
      arguments: { query: 'chargeInvoice', top_k: 1, pagination: { cursor } },
    });
    expect(textOf(last)).toMatch(/^Context for "chargeInvoice" \(1 of 2 results/);
    expect(textOf(last)).not.toContain('More results');
  });

  it("context.search sees only the caller's tenant", async () => {
    const theirs = structured(
      await globex.callTool({ name: 'context.search', arguments: { query: 'chargeInvoice' } }),
    ) as { results: { content: string }[] };
    expect(theirs.results.map((r) => r.content)).toEqual(['globex chargeInvoice secret sauce']);
    const mine = structured(
      await acme.callTool({ name: 'context.search', arguments: { query: 'sauce' } }),
    ) as { results: unknown[] };
    expect(mine.results).toEqual([]);
  });

  it("answers another tenant's document id as not found", async () => {
    const theirs = structured(
      await globex.callTool({ name: 'context.search', arguments: { query: 'sauce' } }),
    ) as { results: { metadata: { document_id: string } }[] };
    const id = theirs.results[0]!.metadata.document_id;
    expect((await globex.callTool({ name: 'context.get', arguments: { id } })).isError).toBeFalsy();
    const mine = await acme.callTool({ name: 'context.get', arguments: { id } });
    expect(mine.isError).toBe(true);
    // context.get is the tool API's tool: MCP answers with the tool API's error object, code and all.
    const toolApi = await fetch(`${api.server.url}/tools/get`, {
      method: 'POST',
      headers: { ...bearer(api), 'content-type': 'application/json' },
      body: JSON.stringify({ id }),
    });
    expect(toolApi.status).toBe(404);
    const expected = (await toolApi.json()) as unknown;
    expect(expected).toEqual({ error: { code: 'not_found', message: anyString } });
    expect(JSON.parse(textOf(mine))).toEqual(expected);
    // The REST API keeps its own codes.
    const rest = await api.call('POST', '/operations/get', { token: api.token(ALL_SCOPES), body: { id } });
    expect(rest.body).toMatchObject({ error: { code: 'NOT_FOUND_ERROR' } });
  });

  it.each([
    ['context.get with no id', 'context.get', {}, 'bad_request'],
    ['context.get with a number for id', 'context.get', { id: 7 }, 'bad_request'],
    ['context.search with an empty query', 'context.search', { query: ' ' }, 'bad_request'],
    ['context.search in semantic mode without embeddings', 'context.search', { query: 'x', mode: 'semantic' }, 'embeddings_disabled'],
  ])("answers %s with the tool API's error code", async (_name, tool, args, code) => {
    const result = await acme.callTool({ name: tool, arguments: args });
    expect(result.isError).toBe(true);
    expect(JSON.parse(textOf(result))).toEqual({ error: { code, message: anyString } });
  });

  it('context.get_related_info gathers the documents, chunks and history of a file', async () => {
    const result = await acme.callTool({
      name: 'context.get_related_info',
      arguments: { file_path: 'src/billing/invoice.ts' },
    });
    expect(result.isError).toBeFalsy();
    const info = structured(result) as {
      documents: { path: string; relation: string }[];
      chunks: { symbol: string | null }[];
      history: { event: string; by: string }[];
    };
    expect(info.documents).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'src/billing/invoice.ts', relation: 'is_file' }),
        expect.objectContaining({ path: 'docs/billing.md', relation: 'mentions' }),
      ]),
    );
    expect(info.chunks.length).toBeGreaterThan(0);
    expect(info.history).toEqual([expect.objectContaining({ event: 'DocumentIngested', by: 'test' })]);
    expect(textOf(result)).toContain('Related to src/billing/invoice.ts:');
    const ticket = structured(
      await acme.callTool({ name: 'context.get_related_info', arguments: { ticket_id: 'BILL-7' } }),
    ) as { documents: { path: string }[] };
    expect(ticket.documents.map((d) => d.path).sort()).toEqual(['docs/billing.md', 'src/billing/invoice.ts']);
    const foreign = structured(
      await globex.callTool({ name: 'context.get_related_info', arguments: { ticket_id: 'BILL-7' } }),
    ) as { documents: unknown[] };
    expect(foreign.documents).toEqual([]);
  });

  it("context.get_related_info shows annotations and relations on the file's chunks, of the caller's tenant only", async () => {
    const before = structured(
      await acme.callTool({
        name: 'context.get_related_info',
        arguments: { file_path: 'src/billing/invoice.ts' },
      }),
    ) as {
      chunks: { chunk_id: string }[];
    };
    const chunkId = before.chunks[0]!.chunk_id;
    const annotate = async (tenant: string, summary: string) => {
      const context = {
        actor: { subject: `${tenant}-annotator`, tenant, via: 'cli' as const },
        correlationId: crypto.randomUUID(),
        project: tenant,
      };
      const run = (name: string, input: unknown) =>
        api.ledger.operation(name).run(input as never, context);
      const { sessionId } = await run('start_session', {
        config: {
          chunks: [
            { chunk_id: chunkId, position: 0, text: 'invoice' },
            { chunk_id: `${tenant}-other`, position: 1, text: 'other' },
          ],
        },
      });
      await run('annotate_chunk', { sessionId, chunkId, summary, tags: ['billing'] });
      await run('add_relation', {
        sessionId,
        sourceChunkId: chunkId,
        targetChunkId: `${tenant}-other`,
        relationType: 'references',
      });
    };
    await annotate('acme', 'Charges an invoice');
    await annotate('globex', 'globex private note');
    await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 10_000 });

    const result = await acme.callTool({
      name: 'context.get_related_info',
      arguments: { file_path: 'src/billing/invoice.ts' },
    });
    const info = structured(result) as {
      annotations: { summary: string; tags: string[] }[];
      relations: { target_chunk_id: string; type: string }[];
    };
    expect(info.annotations).toEqual([
      expect.objectContaining({ summary: 'Charges an invoice', tags: ['billing'] }),
    ]);
    expect(info.relations).toEqual([
      expect.objectContaining({ target_chunk_id: 'acme-other', type: 'references' }),
    ]);
    expect(JSON.stringify(result)).not.toContain('globex private note');
    expect(textOf(result)).toContain('Charges an invoice');
  });

  it('context.index_control reports status, and context.connector_management manages connectors', async () => {
    const status = await acme.callTool({ name: 'context.index_control', arguments: { action: 'status' } });
    expect(structured(status)).toMatchObject({ action: 'status', result: { status: 'idle' } });
    const added = await acme.callTool({
      name: 'context.connector_management',
      arguments: {
        action: 'add',
        connector_config: {
          type: 'github',
          name: 'Main',
          config: { repository: 'org/repo', token: 'ghp_secret' },
        },
      },
    });
    expect(added.isError).toBeFalsy();
    const listed = await acme.callTool({
      name: 'context.connector_management',
      arguments: { action: 'list' },
    });
    expect(JSON.stringify(listed)).not.toContain('ghp_secret');
    expect(structured(listed)).toMatchObject({
      result: {
        connectors: [
          expect.objectContaining({ name: 'Main', config: { repository: 'org/repo', token: '***' } }),
        ],
      },
    });
    const theirs = await globex.callTool({
      name: 'context.connector_management',
      arguments: { action: 'list' },
    });
    expect(structured(theirs)).toMatchObject({ result: { connectors: [] } });
  });

  it('checks the same scopes as the REST API', async () => {
    const reader = await connect(api, bearer(api, ['search:read', 'connectors:read']));
    const denied = await reader.callTool({ name: 'context.index_control', arguments: { action: 'status' } });
    expect(denied.isError).toBe(true);
    expect(JSON.parse(textOf(denied))).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR' } });
    const write = await reader.callTool({
      name: 'context.connector_management',
      arguments: { action: 'add', connector_config: { type: 'jira', name: 'x' } },
    });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toContain('connectors:write');
    expect(
      (await reader.callTool({ name: 'context.search', arguments: { query: 'x' } })).isError,
    ).toBeFalsy();
    // The event ledger is for administrators: it needs the admin scope.
    const history = await reader.callTool({ name: 'ledger.history', arguments: {} });
    expect(history.isError).toBe(true);
    expect(textOf(history)).toContain("'admin' scope");
    await reader.close();
  });

  it("runs job tools in the caller's tenant, and refuses another tenant's project", async () => {
    for (const args of [{}, { project_id: 'globex' }]) {
      const result = await globex.callTool({ name: 'list_background_jobs', arguments: args });
      expect(structured(result)).toMatchObject({ project_id: 'globex' });
    }
    const foreign = await globex.callTool({ name: 'list_background_jobs', arguments: { project_id: 'acme' } });
    expect(foreign.isError).toBe(true);
    expect(JSON.parse(textOf(foreign))).toEqual({
      error: { code: 'AUTHORIZATION_ERROR', message: "Credentials of tenant 'globex' cannot reach project 'acme'" },
    });
  });

  it('answers a job tool called without its scope with an authorization error, in the job tools\' shape', async () => {
    const reader = await connect(api, bearer(api, ['search:read']));
    const denied = await reader.callTool({ name: 'list_background_jobs', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(JSON.parse(textOf(denied))).toEqual({
      error: { code: 'AUTHORIZATION_ERROR', message: "This action needs the 'index:read' scope", details: { scope: 'index:read' } },
    });
    await reader.close();
  });

  describe('engine://files resources', () => {
    const uri = (path: string) => `engine://files/filesystem/${path}`;

    it('lists the tenant files and their directories a page at a time', async () => {
      const first = (await acme.request({ method: 'resources/list', params: {} })) as {
        resources: { uri: string; mimeType: string }[];
        nextCursor?: string;
      };
      expect(first.resources.length).toBe(100);
      expect(first.nextCursor).toEqual(anyString);
      const second = await acme.listResources({ cursor: first.nextCursor });
      expect(second.nextCursor).toBeUndefined();
      const all = [...first.resources, ...second.resources];
      const uris = all.map((r) => r.uri);
      // 122 files, and the directories they are in: the source's top, docs/, notes/, src/ and src/billing/.
      expect(new Set(uris).size).toBe(127);
      expect(uris.slice(0, 4)).toEqual([uri(''), uri('docs/'), uri('docs/billing.md'), uri('notes/')]);
      expect(uris).toContain(uri('src/billing/invoice.ts'));
      expect(all.filter((r) => r.mimeType === 'text/uri-list').map((r) => r.uri)).toEqual(
        ['', 'docs/', 'notes/', 'src/', 'src/billing/'].map(uri),
      );
      // The client's own listing follows the cursors to the end.
      expect((await acme.listResources()).resources.length).toBe(127);
      expect((await globex.listResources()).resources.map((r) => r.uri)).toEqual(
        ['', 'src/', 'src/billing/', 'src/billing/invoice.ts'].map(uri),
      );
    });

    it('advertises the resource template', async () => {
      const { resourceTemplates } = await acme.listResourceTemplates();
      expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'engine://files/{+path}' })]);
    });

    it("reads a file of the caller's tenant, never another's", async () => {
      const mine = await acme.readResource({ uri: uri('src/billing/invoice.ts') });
      expect(mine.contents[0]).toMatchObject({
        uri: uri('src/billing/invoice.ts'),
        text: expect.stringContaining('chargeInvoice(invoice)') as unknown,
      });
      const theirs = await globex.readResource({ uri: uri('src/billing/invoice.ts') });
      expect(theirs.contents[0]).toMatchObject({ text: 'globex chargeInvoice secret sauce' });
      await expect(globex.readResource({ uri: uri('docs/billing.md') })).rejects.toThrow(/No indexed file/);
    });

    it('gives the same path in two sources two URIs, each read from its own source, and an absolute path one too', async () => {
      await ingest(api, 'initech', [{ source_id: 'lib/lib.es5.d.ts', body: 'first repository' }], 'repo:/work/first');
      await ingest(api, 'initech', [{ source_id: 'lib/lib.es5.d.ts', body: 'second repository' }], 'repo:/work/second');
      // Read from outside the folder it was ingested from: its path is absolute.
      await ingest(api, 'initech', [{ source_id: '/home/me/notes.md', body: 'my notes' }]);
      const client = await connect(api, bearer(api, ALL_SCOPES, 'initech'));
      try {
        const uris = (await client.listResources()).resources.map((r) => r.uri);
        expect(uris).toEqual([
          'engine://files/filesystem/',
          'engine://files/filesystem//',
          'engine://files/filesystem//home/',
          'engine://files/filesystem//home/me/',
          'engine://files/filesystem//home/me/notes.md',
          'engine://files/repo:%2Fwork%2Ffirst/',
          'engine://files/repo:%2Fwork%2Ffirst/lib/',
          'engine://files/repo:%2Fwork%2Ffirst/lib/lib.es5.d.ts',
          'engine://files/repo:%2Fwork%2Fsecond/',
          'engine://files/repo:%2Fwork%2Fsecond/lib/',
          'engine://files/repo:%2Fwork%2Fsecond/lib/lib.es5.d.ts',
        ]);
        expect((await client.readResource({ uri: uris[4]! })).contents[0]).toMatchObject({ text: 'my notes' });
        expect((await client.readResource({ uri: 'engine://files/filesystem//home' })).contents[0]).toMatchObject({
          uri: 'engine://files/filesystem//home/',
          text: 'engine://files/filesystem//home/me/',
        });
        const texts = await Promise.all(
          [uris[7]!, uris[10]!].map(async (u) => ((await client.readResource({ uri: u })).contents[0] as { text: string }).text),
        );
        expect(texts).toEqual(['first repository', 'second repository']);
        expect((await client.readResource({ uri: 'engine://files/' })).contents[0]).toMatchObject({
          text: ['filesystem', 'repo:%2Fwork%2Ffirst', 'repo:%2Fwork%2Fsecond'].map((s) => `engine://files/${s}/`).join('\r\n'),
        });
      } finally {
        await client.close();
      }
    });

    it("answers a missing file with MCP's resource-not-found error, naming the URI", async () => {
      const missing = uri('src/billing/missing.ts');
      const error = await acme.readResource({ uri: missing }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ResourceNotFoundError);
      expect(error).toMatchObject({ code: -32602, data: { uri: missing } });
    });

    it.each([
      'engine://files/filesystem/%2e%2e/%2e%2e/etc/passwd',
      'engine://files//etc/passwd',
      'engine://files/filesystem/src/..%2f..%2fetc/passwd',
      'engine://files/filesystem/..\\..\\etc\\passwd',
    ])('refuses the traversal %s', async (u) => {
      await expect(acme.readResource({ uri: u })).rejects.toThrow(/Refused|No indexed file|Malformed/);
    });

    it('normalises plain ".." segments away before the lookup, so nothing outside the index is read', async () => {
      await expect(acme.readResource({ uri: 'engine://files/filesystem/../../etc/passwd' })).rejects.toThrow(
        /No indexed file or directory etc\/passwd/,
      );
    });
  });
});

describe('MCP tool exposure', () => {
  it('exposes only the configured toolsets, and hides writing tools in read-only mode', async () => {
    const api = await startApiServer({ CTX_MCP__TOOLSETS: 'search,jobs', CTX_MCP__READ_ONLY: 'true' });
    try {
      const client = await connect(api, bearer(api));
      const tools = (await client.listTools()).tools;
      const names = tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'context.search',
          'context.get_related_info',
          'context.get',
          'list_background_jobs',
        ]),
      );
      expect(names).not.toContain('context.index_control');
      expect(names).not.toContain('context.connector_management');
      expect(names).not.toContain('start_indexing_background');
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      await client.close();
    } finally {
      await api.close();
    }
  });
});

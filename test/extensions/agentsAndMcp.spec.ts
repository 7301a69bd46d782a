/* eslint-disable @typescript-eslint/no-unsafe-assignment -- vitest's asymmetric matchers are typed any */
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/domain/metadata.js';
import { startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { fixedContext, openExtensionsLedger, recordingSink, toolsFolder } from './extensionsLedger.js';

const textOf = (result: unknown) => JSON.parse((result as { content: { text: string }[] }).content[0]!.text) as Record<string, unknown>;

describe('agents, MCP and Lua connectors', () => {
  let ledger: Ledger;
  let server: RunningServer;
  let client: Client;
  const recorded = recordingSink();

  beforeAll(async () => {
    ledger = await openExtensionsLedger({
      toolsDir: toolsFolder({
        'spin.lua': `return { name = "spin", description = "loops forever", execute = function() while true do end end }`,
      }),
      timeoutMs: 800,
      contextTools: fixedContext([{ id: 'd1', title: 'Payments runbook', source: 'docs', body: 'payments restart' }]),
      documentSink: recorded.sink,
    });
    server = await startServer(ledger);
    client = new Client({ name: 'extensions-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  const post = (url: string, payload: object) => server.app.inject({ method: 'POST', url, payload });

  describe('over HTTP', () => {
    it('lists TOML and Lua agents with their arguments', async () => {
      const response = await server.app.inject({ method: 'GET', url: '/agents/list' });
      expect(response.statusCode).toBe(200);
      const { agents } = response.json<{ agents: { name: string; source: string }[] }>();
      expect(agents).toEqual(
        expect.arrayContaining([
          {
            name: 'incident_triage',
            description: 'Triage a production incident for a service: gather context, then propose next steps',
            tools: ['search', 'get', 'related_titles'],
            source: 'toml',
            arguments: [
              { name: 'service', description: 'The affected service, e.g. payments-api', required: true },
              { name: 'severity', description: 'P1 to P4', required: false },
            ],
          },
          expect.objectContaining({ name: 'release_notes', source: 'lua', tools: ['search', 'get'] }),
        ]),
      );
    });

    it('renders a TOML agent by substituting its arguments', async () => {
      const response = await post('/agents/incident_triage/prompt', { service: 'payments-api', severity: 'P1' });
      expect(response.statusCode).toBe(200);
      const prompt = response.json<{ system: string; tools: string[]; messages: { role: string; content: string }[] }>();
      expect(prompt.system).toMatch(/^You are an on-call engineer triaging an incident in payments-api\./);
      expect(prompt.tools).toEqual(['search', 'get', 'related_titles']);
      expect(prompt.messages).toEqual([
        { role: 'user', content: 'payments-api has a P1 incident. Find its runbook and recent changes, then list the likely causes.' },
      ]);
    });

    it('renders a Lua agent through agent.render', async () => {
      const response = await post('/agents/release_notes/prompt', { version: '2.0', areas: 'search, lua tools' });
      expect(response.json()).toEqual({
        system: 'You write concise release notes for version 2.0.',
        tools: ['search', 'get'],
        messages: [{ role: 'user', content: 'Cover these areas:\n- search\n- lua tools' }],
      });
    });

    it('answers a missing required argument with 400 and an unknown agent with 404', async () => {
      const missing = await post('/agents/incident_triage/prompt', { severity: 'P2' });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ error: { code: 'bad_request', message: expect.stringMatching(/service/) } });
      const unknown = await post('/agents/nobody/prompt', {});
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ error: { code: 'not_found' } });
    });
  });

  describe('over MCP', () => {
    it('lists Lua tools with their parameter schemas', async () => {
      const { tools } = await client.listTools();
      const wordCount = tools.find((t) => t.name === 'word_count');
      expect(wordCount?.description).toBe('Count the words, lines and characters in a piece of text');
      expect(wordCount?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    });

    it('calls a Lua tool', async () => {
      const result = await client.callTool({ name: 'related_titles', arguments: { topic: 'payments' } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toEqual({ result: { topic: 'payments', titles: [{ id: 'd1', title: 'Payments runbook' }] } });
    });

    it('refuses parameters that do not match the declared schema', async () => {
      const result = await client.callTool({ name: 'word_count', arguments: { text: 42 } });
      expect(result.isError).toBe(true);
    });

    it('reports a timeout as an error result', async () => {
      const result = await client.callTool({ name: 'spin', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatchObject({ error: { code: 'TIMEOUT' } });
    });

    it('serves agents as prompts', async () => {
      const mcpServer = (await ledger.mcpServers())({ subject: 'e2e', tenant: null, via: 'mcp' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await mcpServer.connect(serverSide);
      const promptClient = new Client({ name: 'prompts', version: '1.0.0' });
      await promptClient.connect(clientSide);
      try {
        const { prompts } = await promptClient.listPrompts();
        const triage = prompts.find((p) => p.name === 'incident_triage');
        expect(triage?.arguments).toEqual([
          { name: 'service', description: 'The affected service, e.g. payments-api', required: true },
          { name: 'severity', description: 'P1 to P4', required: false },
        ]);
        expect(prompts.map((p) => p.name)).toContain('release_notes');
        const prompt = await promptClient.getPrompt({ name: 'incident_triage', arguments: { service: 'search-api', severity: 'P3' } });
        expect(prompt.messages.map((m) => m.role)).toEqual(['user', 'user']);
        expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringMatching(/incident in search-api/) });
        const lua = await promptClient.getPrompt({ name: 'release_notes', arguments: { version: '3.1' } });
        expect(lua.messages[0]?.content).toMatchObject({ text: 'You write concise release notes for version 3.1.' });
      } finally {
        await promptClient.close();
      }
    });
  });

  describe('Lua connectors', () => {
    const sync = () =>
      ledger.operation('extensions.sync').run({ name: 'release_feed' }, { actor: SYSTEM_ACTOR, correlationId: crypto.randomUUID(), project: DEFAULT_PROJECT });

    it('ingests every page a connector returns, then resumes from its cursor', async () => {
      expect(await sync()).toEqual({ connector: 'release_feed', pages: 2, documents: 3, created: 3, updated: 0, unchanged: 0, cursor: '3' });
      expect(recorded.documents.get('release_feed/1.2.0')).toEqual({
        source: 'release_feed',
        sourceId: '1.2.0',
        title: '1.2.0',
        body: 'Adds Lua tools.',
        updatedAt: '2025-03-20T09:00:00Z',
        metadata: { tags: ['lua'] },
      });
      expect(await sync()).toMatchObject({ pages: 1, documents: 0, cursor: '3' });
    });

    it('answers an unknown connector with not_found', async () => {
      await expect(
        ledger.operation('extensions.sync').run({ name: 'nope' }, { actor: SYSTEM_ACTOR, correlationId: crypto.randomUUID(), project: DEFAULT_PROJECT }),
      ).rejects.toMatchObject({ code: 'NOT_FOUND_ERROR' });
    });
  });
});

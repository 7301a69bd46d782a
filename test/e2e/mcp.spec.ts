import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, ResourceNotFoundError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamId } from '../../src/domain/events.js';
import { startServer, type RunningServer } from '../../src/main.js';
import { ctxCommand, runCtx, spawnCtx } from '../support/cli.js';
import { newEvent, newEvents } from '../support/events.js';
import { openTestLedger, tempDataDir } from '../support/ledger.js';

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;
const textOf = (result: unknown) =>
  JSON.parse((result as { content: { type: string; text: string }[] }).content[0]!.text) as Record<string, unknown>;

describe('MCP over Streamable HTTP', () => {
  let server: RunningServer;
  let client: Client;
  const jobStream = streamId('job', crypto.randomUUID());

  beforeAll(async () => {
    const ledger = await openTestLedger();
    await ledger.store.append(jobStream, newEvents(3, { project: 'alpha' }), 'no_stream');
    await ledger.store.append(
      streamId('connector', crypto.randomUUID()),
      [
        newEvent({
          type: 'ConnectorRemoved',
          schemaVersion: 1,
          data: { connectorId: crypto.randomUUID() },
        }),
      ],
      'no_stream',
    );
    server = await startServer(ledger);
    client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('lists ledger.history with its input and output schemas', async () => {
    const { tools } = await client.listTools();
    const history = tools.find((t) => t.name === 'ledger.history');
    expect(history?.inputSchema.properties).toHaveProperty('stream');
    expect(history?.outputSchema?.properties).toHaveProperty('events');
  });

  it('returns the events of a stream in order, as structured content and as text', async () => {
    const result = await client.callTool({ name: 'ledger.history', arguments: { stream: jobStream } });
    const page = structured(result) as { events: { revision: number; type: string; streamId: string }[] };
    expect(page.events.map((e) => e.revision)).toEqual([0, 1, 2]);
    expect(page.events.every((e) => e.streamId === jobStream && e.type === 'IndexingJobStarted')).toBe(true);
    expect(textOf(result)).toEqual(page);
  });

  it('pages through $all filtered by type with a cursor', async () => {
    const first = structured(
      await client.callTool({ name: 'ledger.history', arguments: { types: ['IndexingJobStarted'], limit: 2 } }),
    ) as { events: unknown[]; nextCursor: string | null };
    expect(first.events).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = structured(
      await client.callTool({
        name: 'ledger.history',
        arguments: { types: ['IndexingJobStarted'], limit: 2, cursor: first.nextCursor },
      }),
    ) as { events: unknown[]; nextCursor: string | null };
    expect(second.events).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
  });

  it('answers an unknown stream with an empty history, not an error', async () => {
    const result = await client.callTool({ name: 'ledger.history', arguments: { stream: 'job-unknown' } });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toEqual({ events: [], nextCursor: null });
  });

  it('reports bad input as an error result', async () => {
    const result = await client.callTool({ name: 'ledger.history', arguments: { stream: 'job-x', cursor: 'abc' } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/cursor/);
  });

  it('answers prompts/list with no agents configured', async () => {
    expect(client.getServerCapabilities()?.prompts).toBeDefined();
    expect((await client.listPrompts()).prompts).toEqual([]);
  });

  it('answers MCP at the base URL too', async () => {
    const rootClient = new Client({ name: 'root', version: '1.0.0' });
    await rootClient.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    expect((await rootClient.listTools()).tools.map((t) => t.name)).toContain('ledger.history');
    await rootClient.close();
  });

  it('serves /health', async () => {
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });
});

describe('MCP over stdio', () => {
  it('lists tools and calls ledger.history through `ctx mcp`', async () => {
    const { command, args, cwd } = ctxCommand(['mcp', '--toolsets', 'all', '--data-dir', tempDataDir()]);
    const transport = new StdioClientTransport({ command, args, cwd, stderr: 'pipe' });
    const client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('ledger.history');
      const result = await client.callTool({ name: 'ledger.history', arguments: {} });
      expect(structured(result)).toEqual({ events: [], nextCursor: null });
    } finally {
      await client.close();
    }
  });
});

describe('MCP over stdio, input nested deeper than any stack', () => {
  it('answers a call nested 20,000 levels deep with an error result, and goes on serving', async () => {
    const child = spawnCtx(['mcp', '--data-dir', tempDataDir()], { CTX_EMBEDDINGS__PROVIDER: 'none' });
    const answers = new Map<number, string>();
    const answered = (id: number) =>
      new Promise<string>((resolve) => {
        const check = () => (answers.has(id) ? resolve(answers.get(id)!) : setTimeout(check, 50));
        check();
      });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const id = (JSON.parse(line) as { id?: number }).id;
      if (typeof id === 'number') answers.set(id, line);
    });
    const send = (line: string) => child.stdin!.write(`${line}\n`);
    send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'deep', version: '1' } } }));
    await answered(1);
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    // Written by hand: a client's own JSON.stringify would overflow first.
    const deep = `${'{"a":'.repeat(20_000)}{}${'}'.repeat(20_000)}`;
    send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context.search","arguments":{"query":"x","filters":${deep}}}}`);
    const refused = JSON.parse(await answered(2)) as { result: { isError: boolean; content: { text: string }[] } };
    expect(refused.result.isError).toBe(true);
    expect(JSON.parse(refused.result.content[0]!.text)).toEqual({
      error: { code: 'bad_request', message: 'Invalid input: nested more than 64 levels deep' },
    });
    send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'context.sources', arguments: {} } }));
    expect((JSON.parse(await answered(3)) as { result: { isError?: boolean } }).result.isError).toBeFalsy();
    child.stdin!.end();
    await new Promise((resolve) => child.on('close', resolve));
  }, 120_000);
});

describe('`ctx mcp` started from the home folder, as a desktop client may start it', () => {
  it("lets no agent have the user's keys read into the index, until ingest.roots names a folder", async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'ctx-home-'));
    mkdirSync(path.join(home, '.ssh'));
    const key = path.join(home, '.ssh', 'id_ed25519');
    writeFileSync(key, '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n');
    mkdirSync(path.join(home, 'project'));
    writeFileSync(path.join(home, 'project', 'plan.md'), '# Plan\n\nShip it.\n');
    const connect = async (env: Record<string, string>) => {
      const { command, args } = ctxCommand(['mcp', '--data-dir', tempDataDir()]);
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      const environment = { ...process.env, HOME: home, CTX_EMBEDDINGS__PROVIDER: 'none', ...env };
      await client.connect(new StdioClientTransport({ command, args, cwd: home, env: environment, stderr: 'pipe' }));
      return client;
    };
    const ingest = (client: Client, paths: string[]) => client.callTool({ name: 'documents.ingest', arguments: { paths } });
    const found = async (client: Client, query: string) =>
      ((await client.callTool({ name: 'context.search', arguments: { query, mode: 'keyword' } })) as { content: { text: string }[] })
        .content[0]!.text;

    const unset = await connect({});
    try {
      const refused = (await ingest(unset, [key])) as { isError?: boolean; content: { text: string }[] };
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toContain(
        `(setting ingest.roots): it is unset, and ctx runs from ${home}, the home folder, which is not read unless named.`,
      );
      expect(await found(unset, 'OPENSSH PRIVATE KEY')).toMatch(/no results/i);
    } finally {
      await unset.close();
    }

    const named = await connect({ CTX_INGEST__ROOTS: path.join(home, 'project') });
    try {
      expect(structured(await ingest(named, [path.join(home, 'project')]))).toMatchObject({ created: 1 });
      expect(await found(named, 'ship')).toContain('plan.md');
      expect((await ingest(named, [key])) as { isError?: boolean }).toMatchObject({ isError: true });
    } finally {
      await named.close();
    }
  }, 120_000);
});

describe('engine://files over stdio', () => {
  it('exposes files ingested from outside the working directory, by their absolute path', async () => {
    const dataDir = tempDataDir();
    const cwd = mkdtempSync(path.join(tmpdir(), 'ctx-cwd-'));
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'ctx-elsewhere-'));
    mkdirSync(path.join(elsewhere, 'notes'));
    writeFileSync(path.join(elsewhere, 'notes', 'plan.md'), '# Plan\n\nShip it.\n');
    const env = { CTX_INGEST__ROOTS: tmpdir(), CTX_EMBEDDINGS__PROVIDER: 'none' };
    const ingested = await runCtx(['ingest', elsewhere, '--data-dir', dataDir], env, { cwd });
    expect(ingested.code, ingested.stderr).toBe(0);

    const { command, args } = ctxCommand(['mcp', '--data-dir', dataDir]);
    const client = new Client({ name: 'stdio-files', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command, args, cwd, env: { ...process.env, ...env }, stderr: 'pipe' }),
    );
    try {
      const file = `engine://files/filesystem/${elsewhere}/notes/plan.md`;
      const uris = (await client.listResources()).resources.map((r) => r.uri);
      expect(uris).toContain(file);
      expect(uris).toContain(`engine://files/filesystem/${elsewhere}/notes/`);
      expect((await client.readResource({ uri: file })).contents[0]).toMatchObject({ uri: file, text: '# Plan\n\nShip it.\n' });
      await expect(client.readResource({ uri: `engine://files/filesystem/${elsewhere}/notes/gone.md` })).rejects.toBeInstanceOf(
        ResourceNotFoundError,
      );
    } finally {
      await client.close();
    }
  });
});

describe('MCP over stdio, limited by the deployment', () => {
  const listOver = async (args: string[], env: Record<string, string> = {}) => {
    const { command, args: full, cwd } = ctxCommand(['mcp', '--data-dir', tempDataDir(), ...args]);
    const client = new Client({ name: 'stdio-access', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args: full, cwd, env: { ...process.env, ...env } as Record<string, string>, stderr: 'pipe' }));
    return client;
  };

  it('serves only the chosen toolsets and no tool that writes with --toolsets and --read-only', async () => {
    const client = await listOver(['--toolsets', 'search,jobs', '--read-only']);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['context.search', 'context.get', 'context.sources', 'get_job_status', 'list_background_jobs']));
      for (const hidden of ['documents.ingest', 'start_indexing_background', 'cancel_job', 'ledger.history', 'start_session']) {
        expect(names).not.toContain(hidden);
      }
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      await expect(client.callTool({ name: 'start_indexing_background', arguments: { repo_path: '/tmp' } })).rejects.toThrow(
        /start_indexing_background not found/,
      );
    } finally {
      await client.close();
    }
  });

  it('applies mcp.toolsets and mcp.read_only from the configuration', async () => {
    const client = await listOver([], { CTX_MCP__TOOLSETS: 'ledger,jobs', CTX_MCP__READ_ONLY: 'true' });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('ledger.history');
      expect(names).toContain('get_job_status');
      expect(names).not.toContain('context.search');
      expect(names).not.toContain('cancel_job');
    } finally {
      await client.close();
    }
  });

  it('refuses an unknown toolset with exit code 2', async () => {
    const result = await runCtx(['mcp', '--data-dir', tempDataDir(), '--toolsets', 'search,bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/mcp\.toolsets/);
  });
});

describe('MCP over HTTP, 2025 protocol era', () => {
  it('answers a classic initialize handshake and tools/list without a session', async () => {
    const ledger = await openTestLedger();
    const server = await startServer(ledger);
    try {
      const post = (body: object) =>
        fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify(body),
        }).then((r) => r.text());
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
      });
      expect(init).toContain('"protocolVersion":"2025-06-18"');
      expect(await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })).toContain('ledger.history');
    } finally {
      await server.close();
    }
  });
});

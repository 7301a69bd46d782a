import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { ensureBuilt } from '../support/builtCli.js';
import { openTestLedger, tempDataDir } from '../support/ledger.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

interface ServerEntry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
}

/** The `mcpServers` entries of README.md's JSON blocks, as a client configuration holds them. */
const snippets = (): ServerEntry[] =>
  [...README.matchAll(/^```json\n([\s\S]*?)^```$/gm)]
    .map(([, block]) => JSON.parse(block!) as { mcpServers?: Record<string, ServerEntry> })
    .flatMap((config) => Object.values(config.mcpServers ?? {}));

/** Every MCP client configuration README.md gives works as written, but for its placeholders. */
describe("README's MCP client configurations", () => {
  let server: RunningServer;

  beforeAll(async () => {
    await ensureBuilt();
    server = await startServer(await openTestLedger());
  }, 300_000);
  afterAll(() => server.close());

  it('are a program started over stdio from another folder, and the running server by URL', () => {
    const entries = snippets();
    expect(entries.filter((e) => e.command)).toHaveLength(1);
    expect(entries.filter((e) => e.url)).toHaveLength(1);
    for (const entry of entries) expect(entry.command ?? 'node').toBe('node');
  });

  it.each(snippets().filter((e) => e.command).map((e) => [e.args!.join(' '), e] as const))(
    'starts %s, which lists the tools and ingests the project it names',
    async (_args, entry) => {
      const dataDir = tempDataDir();
      const project = tempDataDir('ctx-project-');
      writeFileSync(path.join(project, 'plan.md'), '# Plan\n');
      const placeholders = (value: string) =>
        value.replace('/path/to/context-ledger', ROOT).replace('/path/to/.ctx', dataDir).replace('/path/to/your/project', project);
      const args = entry.args!.map(placeholders);
      const env = Object.fromEntries(Object.entries(entry.env ?? {}).map(([name, value]) => [name, placeholders(value)]));
      const client = new Client({ name: 'readme-stdio', version: '1.0.0' });
      // A desktop client starts it from a folder of its own.
      await client.connect(
        new StdioClientTransport({
          command: entry.command!,
          args,
          cwd: tempDataDir('ctx-client-'),
          env: { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'none', ...env },
          stderr: 'pipe',
        }),
      );
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('context.search');
        const ingested = await client.callTool({ name: 'documents.ingest', arguments: { paths: [project] } });
        expect(ingested).toMatchObject({ structuredContent: { created: 1 } });
      } finally {
        await client.close();
      }
    },
    120_000,
  );

  it.each(snippets().filter((e) => e.url).map((e) => [e.url!, e] as const))('reaches %s, which lists the tools', async (url) => {
    const client = new Client({ name: 'readme-http', version: '1.0.0' });
    // As written, but for the port the test server listens on.
    const port = new URL(server.url).port;
    await client.connect(new StreamableHTTPClientTransport(new URL(url.replace(':7331', `:${port}`))));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('context.search');
    } finally {
      await client.close();
    }
  });
});

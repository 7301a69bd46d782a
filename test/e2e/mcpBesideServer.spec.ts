import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { ctxCommand, runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe('ctx mcp beside a running ctx serve', () => {
  it('relays a desktop client to the server that holds the data directory', async () => {
    const cwd = tempDataDir('ctx-mcp-beside-');
    mkdirSync(path.join(cwd, 'docs'));
    writeFileSync(path.join(cwd, 'docs/garage.md'), '# Garage\n\nChange the engine oil every ten thousand kilometres.\n');
    const env = { CTX_EMBEDDINGS__PROVIDER: 'none' };
    const server = spawnCtx(['serve', '--bind', '127.0.0.1:0'], env, { cwd });
    let out = '';
    const exited = new Promise((resolve) => server.on('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('Context Ledger is serving on')) resolve();
        });
        server.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
      });
      const ingested = await runCtx(['ingest', './docs'], env, { cwd });
      expect(ingested.code, ingested.stderr).toBe(0);

      const { command, args } = ctxCommand(['mcp']);
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command, args, cwd, env: { ...process.env, ...env }, stderr: 'pipe' }));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('context.search');
        const found = await client.callTool({ name: 'context.search', arguments: { query: 'engine oil' } });
        expect(found.isError).toBeFalsy();
        expect(JSON.stringify(structured(found))).toContain('docs/garage.md');
      } finally {
        await client.close();
      }
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  }, 180_000);

  it('answers the CLI beside it while a desktop client holds the data directory through it', async () => {
    const cwd = tempDataDir('ctx-mcp-holds-');
    mkdirSync(path.join(cwd, 'docs'));
    writeFileSync(path.join(cwd, 'docs/garage.md'), '# Garage\n\nChange the engine oil every ten thousand kilometres.\n');
    const env = { CTX_EMBEDDINGS__PROVIDER: 'none' };
    const { command, args } = ctxCommand(['mcp']);
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, cwd, env: { ...process.env, ...env }, stderr: 'pipe' }));
    try {
      const ingested = await runCtx(['ingest', './docs'], env, { cwd });
      expect(ingested.code, ingested.stderr).toBe(0);
      const searched = await runCtx(['search', 'engine', 'oil'], env, { cwd });
      expect(searched.code, searched.stderr).toBe(0);
      expect(searched.stdout).toContain('docs/garage.md');
      const found = await client.callTool({ name: 'context.search', arguments: { query: 'engine oil' } });
      expect(JSON.stringify(structured(found))).toContain('docs/garage.md');
    } finally {
      await client.close();
    }
  }, 180_000);
});

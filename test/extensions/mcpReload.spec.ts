import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';

const SHOUT = `return {
  name = "shout",
  description = "Upper-cases a text",
  parameters = { type = "object", properties = { text = { type = "string" } }, required = { "text" } },
  execute = function(params, ctx) return { text = params.text:upper() } end,
}`;

describe('a Lua tool dropped into the folder while the server runs', () => {
  let server: RunningServer;
  let toolsDir: string;
  beforeAll(async () => {
    toolsDir = mkdtempSync(path.join(tmpdir(), 'ctx-tools-'));
    server = await startServer(await openTestLedger({ CTX_EMBEDDINGS__PROVIDER: 'none', CTX_EXTENSIONS__TOOLS_DIR: toolsDir }));
  }, 60_000);
  afterAll(async () => server.close());

  it('becomes an MCP tool without a restart', async () => {
    writeFileSync(path.join(toolsDir, 'shout.lua'), SHOUT);
    const client = new Client({ name: 'reload', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      await expect
        .poll(async () => (await client.listTools()).tools.map((t) => t.name), { timeout: 15_000, interval: 300 })
        .toContain('shout');
      const result = await client.callTool({ name: 'shout', arguments: { text: 'quiet' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).toContain('QUIET');
    } finally {
      await client.close();
    }
  });
});

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';

interface Listed {
  projections: Record<string, unknown>[];
}

/** Each projection's field names, by projection name. */
const fieldsOf = ({ projections }: Listed): Record<string, string> =>
  Object.fromEntries(projections.map((p) => [String(p.name), Object.keys(p).sort().join(',')]));

describe('projection status on every surface', () => {
  let server: RunningServer;
  let client: Client;
  beforeAll(async () => {
    server = await startServer(await openTestLedger({ CTX_EMBEDDINGS__PROVIDER: 'none' }));
    client = new Client({ name: 'projection-status', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 120_000);
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('answers the same fields over MCP and GET /api/v1/projections', async () => {
    const mcp = await client.callTool({ name: 'projections.status', arguments: {} });
    expect(mcp.isError).toBeFalsy();
    const rest = await fetch(`${server.url}/api/v1/projections`);
    expect(rest.status).toBe(200);
    const restBody = (await rest.json()) as Listed;
    const mcpBody = mcp.structuredContent as Listed;
    expect(fieldsOf(mcpBody)).toEqual(fieldsOf(restBody));
    expect(fieldsOf(restBody).streams).toBe(
      'built_version,checkpoint,events_per_second,head,lag_events,lag_seconds,last_error,name,quarantined,rebuild,state,version',
    );
  });
});

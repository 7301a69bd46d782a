import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Actor } from '../../src/domain/metadata.js';
import type { Ledger } from '../../src/main.js';

/** A real MCP client connected to a server's `/mcp` over HTTP, sending `headers` with every request. */
export const connectMcp = async (
  baseUrl: string,
  headers: Record<string, string> = {},
  name = 'test',
): Promise<Client> => {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }),
  );
  return client;
};

/** A real MCP client connected to a ledger's MCP server in this process, acting as `actor`. */
export const connectMcpInProcess = async (
  ledger: Ledger,
  actor: Actor = { subject: 'tester', tenant: null, via: 'mcp' },
  name = 'test',
): Promise<Client> => {
  const client = new Client({ name, version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await (await ledger.mcpServers())(actor).connect(serverSide);
  await client.connect(clientSide);
  return client;
};

/** A tool's answer, from the JSON of its first text content. */
export const toolJson = (result: unknown) =>
  JSON.parse((result as { content: { type: string; text: string }[] }).content[0]!.text) as Record<
    string,
    unknown
  >;

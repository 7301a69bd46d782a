import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { ServerAccess } from './remoteLedger.js';

type Message = Parameters<StdioServerTransport['send']>[0];

const credentialHeaders = (server: ServerAccess): Record<string, string> =>
  server.apiKey ? { 'x-api-key': server.apiKey } : server.token ? { authorization: `Bearer ${server.token}` } : {};

const isRequest = (message: Message): message is Message & { id: string | number; method: string } =>
  'method' in message && 'id' in message;

/**
 * `ctx mcp` beside a running `ctx serve`: relays the desktop client's messages between stdio and the
 * server's `/mcp`, so that one configuration works whether or not the server holds the data
 * directory. The HTTP transport keeps the session and protocol headers; a request the server cannot
 * be reached for is answered with a JSON-RPC error rather than left waiting.
 */
export const relayStdioTo = async (server: ServerAccess): Promise<{ close(): Promise<void> }> => {
  const stdio = new StdioServerTransport();
  const http = new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
    requestInit: { headers: credentialHeaders(server) },
  });
  const report = (error: Error) => process.stderr.write(`ctx mcp: ${server.url}/mcp: ${error.message}\n`);

  stdio.onmessage = (message) => {
    http.send(message).catch((error: Error) => {
      report(error);
      if (isRequest(message))
        void stdio.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `The Context Ledger server at ${server.url} did not answer: ${error.message}` },
        });
    });
  };
  http.onmessage = (message) => {
    // The legacy handshake names the protocol version the HTTP transport must send from then on.
    const result = 'result' in message ? (message.result as { protocolVersion?: unknown }) : undefined;
    if (typeof result?.protocolVersion === 'string') http.setProtocolVersion(result.protocolVersion);
    void stdio.send(message);
  };
  http.onerror = report;
  stdio.onerror = report;

  await http.start();
  await stdio.start();
  return {
    close: async () => {
      await http.close();
      await stdio.close();
    },
  };
};

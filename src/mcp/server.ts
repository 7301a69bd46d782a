import { McpServer } from '@modelcontextprotocol/server';
import { newId } from '../domain/ids.js';
import type { Actor } from '../domain/metadata.js';
import type { Operation } from '../operations.js';
import type { Logger } from '../ports/logger.js';
import { toolFailure, toolSuccess } from './toolResult.js';

export interface McpServerOptions {
  name: string;
  version: string;
  operations: readonly Operation[];
  logger: Logger;
}

/** Builds a fresh MCP server with every operation as a tool; the SDK calls this per request or connection. */
export const createMcpServerFactory =
  ({ name, version, operations, logger }: McpServerOptions) =>
  (actor: Actor): McpServer => {
    const server = new McpServer({ name, version }, { capabilities: { tools: {} } });
    for (const operation of operations) {
      server.registerTool(
        operation.name,
        {
          title: operation.title,
          description: operation.description,
          inputSchema: operation.input,
          outputSchema: operation.output,
          annotations: { readOnlyHint: !operation.writes },
        },
        async (input: Record<string, unknown>) => {
          const correlationId = newId();
          try {
            const output = await operation.run(input, { actor, correlationId });
            return toolSuccess(output as Record<string, unknown>);
          } catch (error) {
            return toolFailure(error, logger, correlationId);
          }
        },
      );
    }
    return server;
  };

import { McpServer } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { newId } from '../domain/ids.js';
import { AppError } from '../errors.js';
import type { Actor } from '../domain/metadata.js';
import { DEFAULT_PROJECT, type Operation } from '../operations.js';
import type { Logger } from '../ports/logger.js';
import { toolFailure, toolSuccess } from './toolResult.js';

export interface McpServerOptions {
  name: string;
  version: string;
  operations: readonly Operation[];
  logger: Logger;
  /** Adds what is not an operation (prompts, resources) to each server. */
  extend?: (server: McpServer, actor: Actor) => void;
}

/**
 * The operation's schema as listed to clients, but accepting any arguments: the operation checks
 * them itself and answers bad input with its own error objects.
 */
const advertisedOnly = (schema: z.ZodObject): z.ZodObject => {
  const standard = schema['~standard'];
  return { '~standard': { ...standard, validate: (value: unknown) => ({ value }) } } as unknown as z.ZodObject;
};

/** Builds a fresh MCP server with every operation as a tool; the SDK calls this per request or connection. */
export const createMcpServerFactory =
  ({ name, version, operations, logger, extend }: McpServerOptions) =>
  (actor: Actor): McpServer => {
    const server = new McpServer({ name, version }, { capabilities: { tools: {} } });
    extend?.(server, actor);
    for (const operation of operations) {
      server.registerTool(
        operation.name,
        {
          title: operation.title,
          description: operation.description,
          inputSchema: operation.mcpError ? advertisedOnly(operation.input) : operation.input,
          outputSchema: operation.output,
          annotations: { readOnlyHint: !operation.writes },
        },
        async (input: Record<string, unknown>) => {
          const correlationId = newId();
          try {
            const output = await operation.run(input, { actor, correlationId, project: DEFAULT_PROJECT });
            return toolSuccess(output);
          } catch (error) {
            const own = operation.mcpError?.(error, correlationId);
            if (!own) return toolFailure(error, logger, correlationId);
            if (!(error instanceof AppError)) logger.error({ err: error, correlationId }, 'MCP tool failed');
            return { content: [{ type: 'text', text: JSON.stringify(own) }], isError: true };
          }
        },
      );
    }
    return server;
  };

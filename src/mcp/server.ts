import { McpServer } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { newId } from '../domain/ids.js';
import type { Actor } from '../domain/metadata.js';
import { callOperation, checkScope, DEFAULT_PROJECT, requiredScope, type Operation, type Toolset } from '../operations.js';
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

/** What one caller sees and may call over MCP. */
export interface McpAccess {
  /** Scopes of an authenticated caller; null when every scope is allowed. */
  scopes: readonly string[] | null;
  /** Tool groups the deployment exposes; null for all. */
  toolsets: readonly Toolset[] | null;
  /** Hides every tool that writes. */
  readOnly: boolean;
}

export const FULL_ACCESS: McpAccess = { scopes: null, toolsets: null, readOnly: false };

/** What the deployment's `[mcp]` settings expose, to a caller with these scopes (null: all). */
export const deploymentAccess = (
  settings: { toolsets?: readonly Toolset[] | undefined; readOnly: boolean },
  scopes: readonly string[] | null = null,
): McpAccess => ({ scopes, toolsets: settings.toolsets ?? null, readOnly: settings.readOnly });

export const exposedOperations = (operations: readonly Operation[], access: McpAccess) =>
  operations.filter((o) => (!access.toolsets || access.toolsets.includes(o.toolset)) && !(access.readOnly && o.writes));

/**
 * The operation's schema as listed to clients, but accepting any arguments: the SDK would answer
 * bad input with a plain-text message of its own (it has no hook for the error result), so the
 * operation's own parser checks it and bad input gets the tool's error object.
 */
const advertisedOnly = (schema: z.ZodObject): z.ZodObject => {
  const standard = schema['~standard'];
  return { '~standard': { ...standard, validate: (value: unknown) => ({ value }) } } as unknown as z.ZodObject;
};

/** Builds a fresh MCP server with every operation as a tool; the SDK calls this per request or connection. */
export const createMcpServerFactory =
  ({ name, version, operations, logger, extend }: McpServerOptions) =>
  (actor: Actor, access: McpAccess = FULL_ACCESS): McpServer => {
    // Prompts (agents) may be none, yet prompts/list answers, as clients expect.
    const server = new McpServer({ name, version }, { capabilities: { tools: {}, prompts: {} } });
    extend?.(server, actor);
    // A tenant's tools run in its own project, whatever project an input names.
    const project = actor.tenant ?? DEFAULT_PROJECT;
    for (const operation of exposedOperations(operations, access)) {
      const scope = requiredScope(operation);
      server.registerTool(
        operation.name,
        {
          title: operation.title,
          description: operation.description,
          inputSchema: advertisedOnly(operation.input),
          outputSchema: operation.output,
          annotations: { readOnlyHint: !operation.writes },
        },
        async (given: Record<string, unknown>) => {
          const correlationId = newId();
          try {
            const scopes = access.scopes ?? undefined;
            const context = { actor, correlationId, project, ...(scopes ? { scopes } : {}) };
            checkScope(context, scope);
            const output = await callOperation(operation, given, context);
            if (!operation.formatText) return toolSuccess(output);
            return { content: [{ type: 'text', text: operation.formatText(output, given) }], structuredContent: output };
          } catch (error) {
            return toolFailure(error, logger, correlationId, operation.mcpErrors);
          }
        },
      );
    }
    return server;
  };

import { McpServer } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { newId } from '../domain/ids.js';
import type { Actor } from '../domain/metadata.js';
import { callOperation, isTool, type Operation } from '../operations.js';
import { FULL_ACCESS, type McpAccess, type ToolsetChoice } from './access.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import type { Logger } from '../ports/logger.js';
import { toolFailure, toolSuccess } from './toolResult.js';

export interface McpServerOptions {
  name: string;
  version: string;
  operations: readonly Operation[];
  logger: Logger;
  /** Adds what is not an operation (prompts, resources) to each server, for a caller with these scopes (null: all). */
  extend?: (server: McpServer, actor: Actor, scopes: readonly string[] | null) => void;
}

/**
 * The default toolset: what an agent needs to find and read context, small enough to keep in its
 * context window. Every other tool is one `[mcp] toolsets` entry away.
 */
export const DEFAULT_TOOLS: ReadonlySet<string> = new Set([
  'context.search',
  'context.get',
  'context.sources',
  'context.get_related_info',
  'context.index_control',
  'documents.ingest',
]);

/** The tool API names these operations `context.get` and `context.sources` as MCP tools. */
const MCP_NAMES: Readonly<Record<string, string>> = { get: 'context.get', sources: 'context.sources' };

/** `context.search` answers the tool API's search requests too: MCP has one search tool. */
const SUBSUMED = new Set(['search']);

/** An operation's name as an MCP tool. */
export const mcpToolName = (operation: Operation) => MCP_NAMES[operation.name] ?? operation.name;

/** The deployment's own Lua tools are in the default toolset: whoever wrote them meant agents to use them. */
const isDefaultTool = (operation: Operation) =>
  DEFAULT_TOOLS.has(mcpToolName(operation)) || (operation.toolset === 'extensions' && !operation.writes);

const inToolsets = (operation: Operation, toolsets: readonly ToolsetChoice[] | null) =>
  !toolsets ||
  toolsets.includes(operation.toolset) ||
  (toolsets.includes('default') && isDefaultTool(operation));

export const exposedOperations = (operations: readonly Operation[], access: McpAccess) =>
  operations.filter(
    (o) => isTool(o) && !SUBSUMED.has(o.name) && inToolsets(o, access.toolsets) && !(access.readOnly && o.writes),
  );

type JsonSchema = Record<string, unknown>;

/**
 * Drops `pattern` where a `format` says the same (zod lists its whole ISO date-time and UUID
 * expressions, hundreds of characters each): input is still checked in full when a tool is called.
 */
const withoutFormatPatterns = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(withoutFormatPatterns);
  if (!node || typeof node !== 'object') return node;
  // Both strings: a schema's keywords, not properties that happen to be named so.
  const formatted = typeof (node as JsonSchema).format === 'string';
  const entries = Object.entries(node as JsonSchema).filter(
    ([key, value]) => !(key === 'pattern' && typeof value === 'string' && formatted),
  );
  return Object.fromEntries(entries.map(([key, value]) => [key, withoutFormatPatterns(value)]));
};

/**
 * The schema a tool is listed with: compact JSON Schema. With `acceptAnything` (every tool's input)
 * the SDK does not check arguments: it would answer bad input with a plain-text message of its own
 * (it has no hook for the error result), so the operation's parser checks them and bad input gets
 * the tool's error object.
 */
const listed = (schema: z.ZodObject, acceptAnything = false): z.ZodObject => {
  const standard = schema['~standard'];
  const { input, output } = standard.jsonSchema;
  return {
    '~standard': {
      ...standard,
      jsonSchema: {
        input: (options: Parameters<typeof input>[0]) => withoutFormatPatterns(input(options)) as JsonSchema,
        output: (options: Parameters<typeof output>[0]) => withoutFormatPatterns(output(options)) as JsonSchema,
      },
      ...(acceptAnything ? { validate: (value: unknown) => ({ value }) } : {}),
    },
  } as unknown as z.ZodObject;
};

/** A fresh MCP server for a caller; the SDK asks for one per request or connection. */
export type McpServerFactory = (actor: Actor, access?: McpAccess) => McpServer;

/** Builds a fresh MCP server with every operation as a tool; the SDK calls this per request or connection. */
export const createMcpServerFactory =
  ({ name, version, operations, logger, extend }: McpServerOptions): McpServerFactory =>
  (actor: Actor, access: McpAccess = FULL_ACCESS): McpServer => {
    // Prompts (agents) may be none, yet prompts/list answers, as clients expect.
    const server = new McpServer({ name, version }, { capabilities: { tools: {}, prompts: {} } });
    extend?.(server, actor, access.scopes);
    // A tenant's tools run in its own project, whatever project an input names.
    const project = actor.tenant ?? DEFAULT_PROJECT;
    for (const operation of exposedOperations(operations, access)) {
      server.registerTool(
        mcpToolName(operation),
        {
          title: operation.title,
          description: operation.description,
          inputSchema: listed(operation.input, true),
          outputSchema: listed(operation.output),
          annotations: { readOnlyHint: !operation.writes },
        },
        async (given: Record<string, unknown>) => {
          const correlationId = newId();
          try {
            access.limit?.(operation);
            const scopes = access.scopes ?? undefined;
            const context = {
              actor,
              correlationId,
              project,
              ...(scopes ? { scopes } : {}),
              ...(access.credential ? { credential: access.credential } : {}),
              ...(access.unauthenticated ? { unauthenticated: access.unauthenticated } : {}),
            };
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

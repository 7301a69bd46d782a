import type { CallToolResult } from '@modelcontextprotocol/server';
import { AppError } from '../errors.js';
import type { Logger } from '../ports/logger.js';

/** A successful result: the JSON as text for every client, and as structured content. */
export const toolSuccess = (output: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(output) }],
  structuredContent: output,
});

/** The one place MCP maps errors: known ones keep their code and message, the rest are masked. */
export const toolFailure = (error: unknown, logger: Logger, correlationId: string): CallToolResult => {
  const body =
    error instanceof AppError
      ? { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) }
      : { code: 'internal', message: `Internal error (correlation id ${correlationId})` };
  if (!(error instanceof AppError)) logger.error({ err: error, correlationId }, 'MCP tool failed');
  return { content: [{ type: 'text', text: JSON.stringify({ error: body }) }], isError: true };
};

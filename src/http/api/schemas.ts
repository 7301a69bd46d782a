import { z } from 'zod';

/** Request and response shapes of `/api/v1` (the REST API); the OpenAPI document is generated from them. */

export const ErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    detail: z.string(),
    correlation_id: z.string(),
    retryable: z.boolean(),
    docs_url: z.string(),
    retry_after: z.number().int().optional(),
  }),
});


export const OperationNameParamsSchema = z.object({
  name: z.string().min(1).max(200).describe('The operation, as MCP lists its tool (e.g. `search`, `keys.create`)'),
});
export const OperationInputSchema = z
  .record(z.string(), z.unknown())
  .describe("The operation's input, as its MCP tool's input schema describes it");
export const OperationOutputSchema = z
  .record(z.string(), z.unknown())
  .describe("The operation's output, as its MCP tool's output schema describes it");

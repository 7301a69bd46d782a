import { z } from 'zod';

/** Request and response shapes of `/api/v1` (seed 002); the OpenAPI document is generated from them. */

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

export {
  SearchRequestSchema,
  SearchResponseSchema,
  SearchResultSchema,
  SOURCE_TYPES,
} from '../../../queries/searchWithWorkContext.js';
export type { SearchRequest, SearchResponse } from '../../../queries/searchWithWorkContext.js';

export const SuggestionsQuerySchema = z.object({
  q: z.string().max(200).default(''),
  limit: z.coerce.number().int().min(1).max(50).default(5),
});
export const SuggestionsResponseSchema = z.object({ suggestions: z.array(z.string()) });

export const HealthResponseSchema = z.object({
  status: z.enum(['healthy', 'degraded']),
  version: z.string(),
  timestamp: z.string(),
  services: z.object({ index: z.string(), search: z.string(), connectors: z.string() }),
  /** What makes a service degraded while it lasts: a read model that cannot be written (its server down), and why. */
  problems: z
    .array(z.object({ service: z.string(), projection: z.string(), error: z.string(), since: z.string() }))
    .optional(),
});

export const StatusResponseSchema = z.object({
  indexing: z.object({
    status: z.enum(['active', 'idle']),
    last_run: z.string().nullable(),
    documents_indexed: z.number().int(),
    connectors_active: z.number().int(),
  }),
  performance: z.object({
    avg_query_latency_ms: z.number(),
    queries_per_minute: z.number(),
    error_rate: z.number(),
  }),
});

export const IndexStartRequestSchema = z
  .object({
    connectors: z.array(z.string().min(1).max(200)).max(50).optional(),
    force_full_reindex: z.boolean().default(false),
  })
  .strict();
export const IndexStartResponseSchema = z.object({
  job_id: z.string(),
  job_ids: z.array(z.string()),
  status: z.string(),
  estimated_duration_minutes: z.number().nullable(),
});
export const ForceReindexRequestSchema = z
  .object({
    confirm_destructive: z.literal(true, {
      message: 'confirm_destructive must be true to force a full reindex',
    }),
    connectors: z.array(z.string().min(1).max(200)).max(50).default(['all']),
  })
  .strict();
export const ForceReindexResponseSchema = z.object({
  job_id: z.string(),
  job_ids: z.array(z.string()),
  status: z.string(),
  warning: z.string(),
});
export const IndexStopResponseSchema = z.object({
  status: z.enum(['stopping', 'idle']),
  message: z.string(),
  job_ids: z.array(z.string()),
});
export const IndexStatusResponseSchema = z.object({
  status: z.enum(['running', 'idle']),
  current_job: z
    .object({
      id: z.string(),
      started_at: z.string().nullable(),
      progress: z.object({
        completed: z.number(),
        total: z.number(),
        current_connector: z.string().nullable(),
      }),
    })
    .nullable(),
  last_completed: z
    .object({
      finished_at: z.string().nullable(),
      duration_minutes: z.number().nullable(),
      documents_processed: z.number().int(),
    })
    .nullable(),
});

export {
  ConnectorCreateSchema,
  ConnectorUpdateSchema,
  ConnectorDetailSchema,
  ConnectorListSchema,
  ConnectorCreatedSchema,
} from '../../domain/connectorRequests.js';

export const RefreshRequestSchema = z.object({ refresh_token: z.string().min(1).max(512) }).strict();
export const RefreshResponseSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_in: z.number().int(),
  token_type: z.literal('Bearer'),
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

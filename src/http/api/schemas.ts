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

const ConnectorSettings = z.record(z.string(), z.unknown());
export const ConnectorCreateSchema = z
  .object({
    type: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'type uses lowercase letters, digits, - and _'),
    name: z.string().trim().min(1).max(200),
    config: ConnectorSettings.default({}),
  })
  .strict();
export const ConnectorUpdateSchema = z
  .object({ name: z.string().trim().min(1).max(200).optional(), config: ConnectorSettings.optional() })
  .strict()
  .refine((v) => v.name !== undefined || v.config !== undefined, 'give a name or a config to change');
export const ConnectorSchema = z.object({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  status: z.string(),
  last_sync: z.string().nullable(),
  created_at: z.string(),
  config: ConnectorSettings,
});
export const ConnectorDetailSchema = ConnectorSchema.extend({
  stats: z.object({ documents_indexed: z.number().int(), last_error: z.string().nullable() }),
});
export const ConnectorListSchema = z.object({ connectors: z.array(ConnectorSchema) });
export const ConnectorCreatedSchema = ConnectorSchema.pick({
  id: true,
  type: true,
  name: true,
  status: true,
  created_at: true,
});
export const ConnectorUpdatedSchema = z.object({ id: z.string(), status: z.string(), message: z.string() });
export const ConnectorIdParamsSchema = z.object({ id: z.string().max(100) });

export const SettingsSchema = z.object({
  search: z.object({
    max_results: z.number().int().min(1).max(100),
    default_top_k: z.number().int().min(1).max(100),
    enable_reranking: z.boolean(),
  }),
  /** Read from ctx.toml at start; shown, not changed here. */
  indexing: z.object({ batch_size: z.number().int().min(1).max(10_000) }),
  rate_limits: z.object({
    search_per_minute: z.number().int().min(1).max(100_000),
    index_per_minute: z.number().int().min(1).max(100_000),
    connectors_per_minute: z.number().int().min(1).max(100_000),
    config_per_minute: z.number().int().min(1).max(100_000),
  }),
});
export type Settings = z.infer<typeof SettingsSchema>;
export const ConfigPatchSchema = z
  .object({
    search: SettingsSchema.shape.search.partial().strict().optional(),
    indexing: SettingsSchema.shape.indexing.partial().strict().optional(),
    rate_limits: SettingsSchema.shape.rate_limits.partial().strict().optional(),
  })
  .strict();
export const ConfigPatchResponseSchema = z.object({
  updated: z.array(z.string()),
  requires_restart: z.boolean(),
});

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

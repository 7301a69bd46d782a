import { z } from 'zod';
import { CONNECTORS } from '../../src/domain/connectorView.js';
import { UnavailableError } from '../../src/errors.js';
import { defineOperation, type OperationContext, type RouteSurfaces } from '../../src/operations.js';
import type { ReadModels } from '../../src/ports/projections.js';
import type { IndexStatusResponseSchema } from '../../src/services/jobResponses.js';

export const systemStatusSurfaces = {
  name: 'status',
  tool: false,
  toolset: 'jobs',
  writes: false,
  scope: 'index:read',
  input: z.object({}),
  output: z.object({
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
  }),
  rest: { method: 'GET', path: '/status', summary: 'Detailed system status', rateClass: 'index' },
} as const satisfies RouteSurfaces;

export interface SystemStatusDeps {
  readModels: ReadModels;
  indexStatus: (context: OperationContext) => Promise<z.output<typeof IndexStatusResponseSchema>>;
  /** How the API has answered lately. */
  performance: () => { avgQueryLatencyMs: number; queriesPerMinute: number; errorRate: number };
}

/** The project's indexing at a glance, and how the API performs. */
export const systemStatusOperation = ({ readModels, indexStatus, performance }: SystemStatusDeps) =>
  defineOperation({
    ...systemStatusSurfaces,
    title: 'Detailed system status',
    description: "The project's indexing (active or idle, documents, connectors) and the API's latency and error rate.",
    run: async (_input, context) => {
      const { project } = context;
      const [documents, connectorCount, indexing] = await Promise.all([
        readModels.count('documents', 'project', { project }),
        readModels.find(CONNECTORS, { where: { project }, limit: 0 }),
        // Without background jobs, nothing indexes.
        indexStatus(context).catch((error: unknown) => {
          if (error instanceof UnavailableError) return null;
          throw error;
        }),
      ]);
      const measured = performance();
      return {
        indexing: {
          status: indexing?.status === 'running' ? ('active' as const) : ('idle' as const),
          last_run: indexing?.last_completed?.finished_at ?? null,
          documents_indexed: documents.get(project) ?? 0,
          connectors_active: connectorCount.total,
        },
        performance: {
          avg_query_latency_ms: measured.avgQueryLatencyMs,
          queries_per_minute: measured.queriesPerMinute,
          error_rate: measured.errorRate,
        },
      };
    },
  });

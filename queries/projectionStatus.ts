import { z } from 'zod';
import { RebuildProgressSchema, type ProjectionRunner, type ProjectionStatus } from '../src/engine/projectionRunner.js';
import { defineOperation } from '../src/operations.js';

export const ProjectionStatusOutputSchema = z.object({
  projections: z.array(
    z.object({
      name: z.string(),
      version: z.number().int(),
      state: z.enum(['running', 'stopped', 'rebuilding']),
      checkpoint: z.string().describe('Position of the last event applied'),
      head: z.string().describe('Position of the last event in $all'),
      lagEvents: z.number().int().nonnegative(),
      lagSeconds: z.number().nonnegative(),
      eventsPerSecond: z.number().nonnegative(),
      lastError: z.object({ message: z.string(), at: z.string() }).nullable(),
      rebuild: RebuildProgressSchema.nullable(),
      quarantined: z
        .array(
          z.object({
            position: z.string(),
            eventType: z.string(),
            streamId: z.string(),
            error: z.string(),
            quarantinedAt: z.string(),
          }),
        )
        .describe('Events the projection could not apply and went on past'),
    }),
  ),
});
export interface ProjectionStatusOutput {
  projections: ProjectionStatus[];
}

/** Checkpoint, lag, throughput, last error and rebuild progress of every read model. */
export const projectionStatusOperation = (projections: () => ProjectionRunner) =>
  defineOperation({
    name: 'projections.status',
    title: 'Projection status',
    description: 'Every read model with its checkpoint, lag behind the ledger, throughput, last error and rebuild progress.',
    toolset: 'admin',
    scope: 'admin',
    writes: false,
    input: z.object({}).strict(),
    output: ProjectionStatusOutputSchema,
    run: async () => ({ projections: await projections().status() }),
  });

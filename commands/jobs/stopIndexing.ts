import { z } from 'zod';
import { AppError, ERROR_CATALOGUE } from '../../src/errors.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { IndexJobs } from '../../src/ports/indexJobs.js';

export const stopIndexingSurfaces = {
  name: 'index.stop',
  tool: false,
  toolset: 'jobs',
  writes: true,
  scope: 'index:write',
  input: z.object({}),
  output: z.object({
    status: z.enum(['stopping', 'idle']),
    message: z.string(),
    /** The jobs asked to stop. */
    job_ids: z.array(z.string()),
    jobs: z
      .array(
        z.object({
          job_id: z.string(),
          outcome: z.enum(['stopping', 'not_stopped']),
          message: z.string(),
        }),
      )
      .describe('Each job found unfinished, and what became of it: one that ended meanwhile is not stopped, the others still are'),
  }),
  rest: { method: 'POST', path: '/index/stop', summary: 'Stop ongoing indexing', rateClass: 'index' },
} as const satisfies RouteSurfaces;

/** Cancels every unfinished job of the project; each stops after its current file. */
export const stopIndexingOperation = (jobs: IndexJobs) =>
  defineOperation({
    ...stopIndexingSurfaces,
    title: 'Stop ongoing indexing',
    description: "Cancels the project's running, pending and blocked jobs.",
    run: async (_input, context) => {
      const active = [
        ...(await jobs.list(context, 'running')),
        ...(await jobs.list(context, 'pending')),
        ...(await jobs.list(context, 'blocked')),
      ];
      // Each job on its own: one that ended meanwhile (failed, completed) stops none of the others.
      const outcomes = await Promise.all(
        active.map(async (job) => {
          try {
            await jobs.cancel(job.job_id, context);
            return { job_id: job.job_id, outcome: 'stopping' as const, message: 'Cancellation requested' };
          } catch (error) {
            if (!(error instanceof AppError) || ERROR_CATALOGUE[error.code].status >= 500) throw error;
            return { job_id: job.job_id, outcome: 'not_stopped' as const, message: error.message };
          }
        }),
      );
      const stopping = outcomes.filter((o) => o.outcome === 'stopping').map((o) => o.job_id);
      return stopping.length
        ? { status: 'stopping' as const, message: 'Indexing will stop gracefully', job_ids: stopping, jobs: outcomes }
        : { status: 'idle' as const, message: 'No indexing is running', job_ids: [], jobs: outcomes };
    },
  });

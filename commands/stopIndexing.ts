import { z } from 'zod';
import { defineOperation, type RouteSurfaces } from '../src/operations.js';
import type { IndexJobs } from '../src/ports/indexJobs.js';

export const stopIndexingSurfaces = {
  name: 'index.stop',
  tool: false,
  toolset: 'jobs',
  writes: true,
  scope: 'index:write',
  input: z.object({}),
  output: z.object({ status: z.enum(['stopping', 'idle']), message: z.string(), job_ids: z.array(z.string()) }),
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
      for (const job of active) await jobs.cancel(job.job_id, context);
      return active.length
        ? { status: 'stopping' as const, message: 'Indexing will stop gracefully', job_ids: active.map((j) => j.job_id) }
        : { status: 'idle' as const, message: 'No indexing is running', job_ids: [] };
    },
  });

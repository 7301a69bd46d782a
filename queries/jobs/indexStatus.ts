import { z } from 'zod';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { IndexJobs } from '../../src/ports/indexJobs.js';
import { IndexStatusResponseSchema } from '../../src/services/jobResponses.js';

export const indexStatusSurfaces = {
  name: 'index.status',
  tool: false,
  toolset: 'jobs',
  writes: false,
  scope: 'index:read',
  input: z.object({}),
  output: IndexStatusResponseSchema,
  rest: { method: 'GET', path: '/index/status', summary: 'Indexing status', rateClass: 'index' },
} as const satisfies RouteSurfaces;

/** The project's unfinished job, if any, and its last completed one. */
export const indexStatusOperation = (jobs: IndexJobs) =>
  defineOperation({
    ...indexStatusSurfaces,
    title: 'Indexing status',
    description: "The project's current indexing job and its last completed one.",
    run: async (_input, context) => {
      const all = await jobs.list(context);
      const current = all.find((j) => j.status === 'running' || j.status === 'pending' || j.status === 'blocked');
      const last = all.find((j) => j.status === 'completed');
      const minutes =
        last?.started_at && last.completed_at
          ? (Date.parse(last.completed_at) - Date.parse(last.started_at)) / 60_000
          : null;
      return {
        status: current ? ('running' as const) : ('idle' as const),
        current_job: current
          ? {
              id: current.job_id,
              started_at: current.started_at ?? null,
              progress: { completed: current.progress_percentage, total: 100, current_connector: current.repo_path },
            }
          : null,
        last_completed: last
          ? {
              finished_at: last.completed_at ?? null,
              duration_minutes: minutes === null ? null : Number(minutes.toFixed(2)),
              documents_processed: last.files_indexed,
            }
          : null,
      };
    },
  });

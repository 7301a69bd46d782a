import { z } from 'zod';
import { streamId } from '../../src/domain/events.js';
import type { JobView } from '../../src/domain/jobView.js';
import { JobPhaseSchema, JobStatusSchema } from '../../src/domain/jobs.js';
import { ProjectIdSchema } from '../../src/domain/workspace.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { ReadModels } from '../../src/ports/projections.js';

const timestamp = z.iso.datetime({ offset: true });

export const AdminJobSchema = z.object({
  job_id: z.string(),
  project_id: z.string(),
  status: JobStatusSchema,
  phase: JobPhaseSchema.nullable(),
  percent: z.number().int().min(0).max(100),
  message: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const listAllJobsSurfaces = {
  name: 'jobs.list_all',
  tool: false,
  toolset: 'admin',
  writes: false,
  scope: 'admin',
  input: z.object({
    status: JobStatusSchema.optional(),
    project: ProjectIdSchema.optional(),
    limit: z.number().int().min(1).max(500).default(100),
  }),
  output: z.object({ jobs: z.array(AdminJobSchema) }),
  rest: {
    method: 'GET',
    path: '/jobs',
    summary: 'Indexing jobs with live progress, newest first',
    query: ['status', 'project', 'limit'],
  },
} as const satisfies RouteSurfaces;

export interface ListAllJobsDeps {
  readModels: ReadModels;
  store: EventStore;
}

/** Indexing jobs of every project for an administrator; a tenant's administrator sees its own project's only. */
export const listAllJobsOperation = ({ readModels, store }: ListAllJobsDeps) => {
  /** When a job last changed: its stream's last event. */
  const updatedAt = async (job: JobView) => {
    const [last] = await store.readStream(streamId('job', job.jobId), { direction: 'backwards', maxCount: 1 });
    return last?.metadata.occurredAt ?? job.createdAt;
  };
  return defineOperation({
    ...listAllJobsSurfaces,
    title: 'Indexing jobs across projects',
    description: 'Indexing jobs of every project with their live progress, newest first.',
    run: async (input, { actor }) => {
      const tenant = actor.tenant;
      // A tenant's caller sees its own project only: asking for another one finds nothing.
      if (tenant && input.project && input.project !== tenant) return { jobs: [] };
      const project = tenant ?? input.project;
      const { items } = await readModels.find<JobView>('jobs', {
        where: { ...(project ? { project } : {}), ...(input.status ? { status: input.status } : {}) },
        orderBy: [{ field: 'createdAt', direction: 'desc' }],
        limit: input.limit,
      });
      return {
        jobs: await Promise.all(
          items.map(async (job) => ({
            job_id: job.jobId,
            project_id: job.project,
            status: job.status,
            phase: job.phase,
            percent: job.percentage,
            message: job.message,
            created_at: job.createdAt,
            updated_at: await updatedAt(job),
          })),
        ),
      };
    },
  });
};

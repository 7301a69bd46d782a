import { z } from 'zod';
import { JobStatusSchema } from '../src/domain/jobs.js';
import { parseInput } from '../src/validation.js';
import { JobListItemSchema, jobListItem } from '../src/domain/jobResponses.js';
import { ProjectIdSchema, resolveProject } from '../src/domain/workspace.js';
import { defineOperation } from '../src/operations.js';
import { withLiveOutage, type JobReadDeps, type JobView } from '../src/domain/jobView.js';

export const ListJobsInputSchema = z.object({
  status: JobStatusSchema.optional().describe('Only jobs in this status'),
  project_id: ProjectIdSchema.optional(),
  limit: z.number().int().min(1).max(1000).default(50),
  offset: z.number().int().min(0).default(0),
});

export const ListJobsResponseSchema = z.object({
  jobs: z.array(JobListItemSchema),
  total_count: z.number().int().nonnegative(),
  limit: z.number().int(),
  offset: z.number().int(),
  project_id: z.string(),
});

/** Jobs of one project, newest first, with the total ignoring pagination. */
export const listBackgroundJobsOperation = ({ readModels, liveOutage }: Pick<JobReadDeps, 'readModels' | 'liveOutage'>) =>
  defineOperation({
    name: 'list_background_jobs',
    title: 'List background indexing jobs',
    description: 'Indexing jobs of a project, newest first, filtered by status, with limit/offset paging.',
    toolset: 'jobs',
    writes: false,
    input: ListJobsInputSchema,
    output: ListJobsResponseSchema,
    mcpErrors: 'jobs',
    run: async (rawInput) => {
      const input = parseInput(ListJobsInputSchema, rawInput);
      const { project_id } = resolveProject(input.project_id);
      const { items, total } = await readModels.find<JobView>('jobs', {
        where: { project: project_id, ...(input.status ? { status: input.status } : {}) },
        orderBy: [{ field: 'createdAt', direction: 'desc' }],
        limit: input.limit,
        offset: input.offset,
      });
      return { jobs: items.map((job) => jobListItem(withLiveOutage(job, liveOutage))), total_count: total, limit: input.limit, offset: input.offset, project_id };
    },
  });

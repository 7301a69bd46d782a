import { z } from 'zod';
import { JobStatusSchema } from '../../src/domain/jobs.js';
import { parseInput } from '../../src/validation.js';
import { JobListItemSchema, jobListItem } from '../../src/services/jobResponses.js';
import { ProjectIdSchema, resolveProject } from '../../src/domain/workspace.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { withLiveOutage, type JobView } from '../../src/domain/jobView.js';
import { type JobReadDeps } from '../../src/services/jobReads.js';

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

type ListJobsResponse = z.infer<typeof ListJobsResponseSchema>;

export const listBackgroundJobsSurfaces = {
  name: 'list_background_jobs',
  cli: {
    command: ['jobs'],
    description: 'background indexing jobs: list, show, cancel, history',
    options: [
      { flags: '-s, --status <status>', field: 'status', description: 'only jobs in this status', choices: JobStatusSchema.options },
      { flags: '-p, --project <project>', field: 'project_id', description: 'project workspace', default: DEFAULT_PROJECT },
      { flags: '--limit <n>', field: 'limit', description: 'jobs per page', parse: 'number', default: 50 },
      { flags: '--offset <n>', field: 'offset', description: 'skip this many', parse: 'number', default: 0 },
    ],
    catchUp: 'jobs',
    print: {
      table: {
        rows: 'jobs',
        columns: {
          job: '{job_id}',
          status: '{status}',
          progress: '{progress_percentage}%',
          files: '{files_indexed}',
          chunks: '{chunks_created}',
          created: '{created_at}',
          repository: '{repo_path}',
        },
        empty: 'No jobs.',
        more: (page: ListJobsResponse) => {
          const shown = page.offset + page.jobs.length;
          return shown < page.total_count ? `${page.jobs.length} of ${page.total_count}; more: --offset ${shown}` : undefined;
        },
      },
    },
  },
} as const satisfies OperationSurfaces;

/** Jobs of one project, newest first, with the total ignoring pagination. */
export const listBackgroundJobsOperation = ({ readModels, liveOutage }: Pick<JobReadDeps, 'readModels' | 'liveOutage'>) =>
  defineOperation({
    ...listBackgroundJobsSurfaces,
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

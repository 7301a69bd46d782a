import { z } from 'zod';
import { streamId } from '../src/domain/events.js';
import type { StoredEvent } from '../src/domain/events.js';
import { NotFoundError } from '../src/errors.js';
import { jobErrorObject, parseJobInput } from '../src/jobs/jobErrors.js';
import { JobStatusResponseSchema, jobStatusResponse } from '../src/jobs/jobResponses.js';
import { ProjectIdSchema } from '../src/jobs/workspace.js';
import { defineOperation } from '../src/operations.js';
import type { EventStore } from '../src/ports/eventStore.js';
import type { ReadModels } from '../src/ports/projections.js';
import { jobsProjection, type JobView } from '../projections/jobs.js';

export interface JobReadDeps {
  store: EventStore;
  readModels: ReadModels;
}

export const JobIdInputSchema = z.object({
  job_id: z.uuid().describe('The job id returned by start_indexing_background'),
  project_id: ProjectIdSchema.optional().describe('When given, the job must belong to this project'),
});

/** The job as its stream tells it, for a job the read model has not caught up with yet, or as of a past event. */
export const foldJobView = (events: readonly StoredEvent[]): JobView | null =>
  events.reduce<JobView | null>((doc, event) => jobsProjection.evolve(doc, event), null);

export const notFound = (jobId: string) =>
  new NotFoundError(`Job not found: ${jobId}`, {
    job_id: jobId,
    suggestion: 'Verify job_id is correct and job exists in current project workspace',
  });

/** Reads a job from the read model, falling back to its stream right after it was requested. */
export const readJobView = async ({ store, readModels }: JobReadDeps, jobId: string, project?: string): Promise<JobView> => {
  const job = (await readModels.get<JobView>('jobs', jobId)) ?? foldJobView(await store.readStream(streamId('job', jobId)));
  if (!job || (project !== undefined && job.project !== project)) throw notFound(jobId);
  return job;
};

export const getJobStatusOperation = (deps: JobReadDeps) =>
  defineOperation({
    name: 'get_job_status',
    title: 'Get indexing job status',
    description: 'Status of a background indexing job: phase, percentage, counts, timestamps and estimated time left.',
    toolset: 'jobs',
    writes: false,
    input: JobIdInputSchema,
    output: JobStatusResponseSchema,
    mcpError: jobErrorObject,
    run: async (rawInput) => {
      const input = parseJobInput(JobIdInputSchema, rawInput);
      return jobStatusResponse(await readJobView(deps, input.job_id, input.project_id));
    },
  });

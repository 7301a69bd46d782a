import { z } from 'zod';
import { streamId } from '../src/domain/events.js';
import type { JobEvent } from '../src/domain/jobs.js';
import { AsOfSchema, loadAggregateAsOf, parseAsOf, type AsOf, type Fold } from '../src/engine/asOf.js';
import { NotFoundError } from '../src/errors.js';
import { jobErrorObject, parseJobInput } from '../src/jobs/jobErrors.js';
import { jobStatusPrint, JobStatusResponseSchema, jobStatusResponse, withoutDatabaseName, type JobStatusResponse } from '../src/jobs/jobResponses.js';
import { ProjectIdSchema } from '../src/jobs/workspace.js';
import { defineOperation, type OperationSurfaces } from '../src/operations.js';
import type { EventStore } from '../src/ports/eventStore.js';
import type { ReadModels } from '../src/ports/projections.js';
import { jobsProjection, type JobView } from '../projections/jobs.js';

export interface JobReadDeps {
  store: EventStore;
  readModels: ReadModels;
  /** The outage a running job is waiting out in this process, known before its IndexingJobBlocked can be written. */
  liveOutage?: (jobId: string) => string | undefined;
}

/**
 * A running job whose runner is waiting out an outage shows as blocked at once: on a full disk
 * neither its IndexingJobBlocked nor the read model's update may be writable until space is back.
 */
export const withLiveOutage = (job: JobView, liveOutage: JobReadDeps['liveOutage']): JobView => {
  const reason = job.status === 'running' ? liveOutage?.(job.jobId) : undefined;
  if (reason === undefined) return job;
  const { estimatedSecondsRemaining: _eta, ...blocked } = job;
  return { ...blocked, status: 'blocked', message: `Blocked: ${reason}` };
};

export const JobIdInputSchema = z.object({
  job_id: z.uuid().describe('The job id returned by start_indexing_background'),
  project_id: ProjectIdSchema.optional().describe('When given, the job must belong to this project'),
});

export const GetJobStatusInputSchema = JobIdInputSchema.extend({
  as_of: AsOfSchema.optional().describe(
    'The status as it was at this moment: a position from the event history or an ISO 8601 timestamp',
  ),
});

/** A job as its stream tells it, folded the way the jobs read model folds it. */
export const jobViewFold: Fold<JobView | null, JobEvent> = {
  initialState: () => null,
  evolve: (view, event) => jobsProjection.evolve(view, event, event.data.jobId),
};

export const notFound = (jobId: string) =>
  new NotFoundError(`Job not found: ${jobId}`, {
    job_id: jobId,
    suggestion: 'Verify job_id is correct and job exists in current project workspace',
  });

/** Reads a job from the read model, falling back to its stream right after it was requested. */
export const readJobView = async ({ store, readModels }: JobReadDeps, jobId: string, project?: string): Promise<JobView> => {
  const job =
    (await readModels.get<JobView>('jobs', jobId)) ??
    (await loadAggregateAsOf(store, streamId('job', jobId), jobViewFold)).state;
  if (!job || (project !== undefined && job.project !== project)) throw notFound(jobId);
  return job;
};

/** The job as it was at `asOf`, from its stream; not found when it had not been requested by then. */
export const jobViewAsOf = async (store: EventStore, jobId: string, asOf: AsOf, project?: string): Promise<JobView> => {
  const { state: job } = await loadAggregateAsOf(store, streamId('job', jobId), jobViewFold, asOf);
  if (!job || (project !== undefined && job.project !== project)) throw notFound(jobId);
  return job;
};

export const getJobStatusSurfaces = {
  name: 'get_job_status',
  cli: {
    command: ['jobs', 'show'],
    description: 'the status of one job',
    arguments: [{ name: 'jobId', field: 'job_id' }],
    options: [{ flags: '--as-of <position|iso>', field: 'as_of', description: 'the status as it was then' }],
    catchUp: 'jobs',
    shown: (status: JobStatusResponse) => withoutDatabaseName(status),
    print: jobStatusPrint,
  },
} as const satisfies OperationSurfaces;

export const getJobStatusOperation = (deps: JobReadDeps) =>
  defineOperation({
    ...getJobStatusSurfaces,
    title: 'Get indexing job status',
    description:
      'Status of a background indexing job: phase, percentage, counts, timestamps and estimated time left. ' +
      'With `as_of` (a position from the event history or an ISO timestamp), the status as it was then.',
    toolset: 'jobs',
    writes: false,
    input: GetJobStatusInputSchema,
    output: JobStatusResponseSchema,
    mcpError: jobErrorObject,
    run: async (rawInput) => {
      const input = parseJobInput(GetJobStatusInputSchema, rawInput);
      const job = input.as_of
        ? await jobViewAsOf(deps.store, input.job_id, parseAsOf(input.as_of), input.project_id)
        : withLiveOutage(await readJobView(deps, input.job_id, input.project_id), deps.liveOutage);
      return jobStatusResponse(job);
    },
  });

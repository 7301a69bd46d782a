import { z } from 'zod';
import { streamId } from '../../src/domain/events.js';
import { JobIdInputSchema, notFound } from '../../src/domain/jobView.js';
import { loadAggregateAsOf } from '../../src/engine/asOf.js';
import { resolveProject } from '../../src/domain/workspace.js';
import { IllegalStateError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { ReadableRoots } from '../../src/ports/readableRoots.js';
import { jobDecider } from '../../src/services/jobDecider.js';
import { parseInput } from '../../src/validation.js';
import { checkRepoPath, startRepositoryJob, StartIndexingResponseSchema, type JobRequestDeps } from './startIndexing.js';
import { connectorOfSyncJob } from './syncConnector.js';

/** The job statuses a retry starts again from: those that ended without finishing. */
const RETRYABLE = ['failed', 'cancelled'] as const;

export const RetryJobResponseSchema = StartIndexingResponseSchema.extend({
  retry_of: z.uuid().describe('The failed or cancelled job this one runs again'),
});

export const retryJobSurfaces = {
  name: 'jobs.retry',
  rest: { method: 'POST', path: '/jobs/{job_id}/retry', summary: 'Run a failed or cancelled job again', status: 202 },
  cli: {
    command: ['jobs', 'retry'],
    description: 'run a failed or cancelled job again, as a new job with the same request',
    arguments: [{ name: 'jobId', field: 'job_id' }],
    print: { line: 'Started job {job_id} ({status}), a retry of {retry_of}.' },
  },
} as const satisfies OperationSurfaces;

/**
 * Runs a failed or cancelled job again: a new job with the same request (repository or connector,
 * patterns, force), checked as a new start is. The old job keeps its history; unchanged files are
 * skipped, so a retry picks up where the old job stopped.
 */
export const retryJobOperation = ({ readable, ...deps }: JobRequestDeps & { readable: ReadableRoots }) =>
  defineOperation({
    ...retryJobSurfaces,
    title: 'Retry an indexing job',
    description: 'Runs a failed or cancelled indexing or sync job again, as a new job with the same request; answers with the new job id.',
    toolset: 'jobs',
    writes: true,
    scope: 'index:write',
    input: JobIdInputSchema,
    output: RetryJobResponseSchema,
    mcpErrors: 'jobs',
    run: async (rawInput, operation) => {
      const input = parseInput(JobIdInputSchema, rawInput);
      const { state: job } = await loadAggregateAsOf(deps.store, streamId('job', input.job_id), jobDecider);
      if (job.status === null || job.project === null || (input.project_id !== undefined && job.project !== input.project_id)) {
        throw notFound(input.job_id);
      }
      if (!(RETRYABLE as readonly string[]).includes(job.status)) {
        throw new IllegalStateError(`Cannot retry job in status '${job.status}'. Only failed or cancelled jobs can be retried.`, {
          job_id: input.job_id,
          current_status: job.status,
          allowed_statuses: [...RETRYABLE],
        });
      }
      // A repository is checked again: the folders ingestion may read can have changed since.
      const repoPath = connectorOfSyncJob(job.repoPath) === null ? checkRepoPath(job.repoPath, readable) : job.repoPath;
      const started = await startRepositoryJob(deps, operation, job.project, {
        repoPath,
        forceReindex: job.forceReindex,
        include: job.include,
        exclude: job.exclude,
      });
      return { ...started, ...resolveProject(job.project), retry_of: input.job_id };
    },
  });

import { AsOfSchema, parseAsOf } from '../../src/domain/asOf.js';
import { parseInput } from '../../src/validation.js';
import {
  jobStatusPrint,
  JobStatusResponseSchema,
  jobStatusResponse,
  withoutDatabaseName,
  type JobStatusResponse,
} from '../../src/services/jobResponses.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { JobIdInputSchema, withLiveOutage } from '../../src/domain/jobView.js';
import { jobViewAsOf, readJobView, type JobReadDeps } from '../../src/services/jobReads.js';

export const GetJobStatusInputSchema = JobIdInputSchema.extend({
  as_of: AsOfSchema.optional().describe(
    'The status as it was at this moment: a position from the event history or an ISO 8601 timestamp',
  ),
});

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
    mcpErrors: 'jobs',
    run: async (rawInput) => {
      const input = parseInput(GetJobStatusInputSchema, rawInput);
      const job = input.as_of
        ? await jobViewAsOf(deps.store, input.job_id, parseAsOf(input.as_of), input.project_id)
        : withLiveOutage(await readJobView(deps, input.job_id, input.project_id), deps.liveOutage);
      return jobStatusResponse(job);
    },
  });

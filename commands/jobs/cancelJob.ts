import { z } from 'zod';
import { streamId } from '../../src/domain/events.js';
import { commandContext, handleCommand } from '../../src/engine/commands.js';
import { parseInput } from '../../src/validation.js';
import type { JobRunner } from '../../src/ports/jobRunner.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { JobIdInputSchema, notFound } from '../../src/domain/jobView.js';
import { readJobView, type JobReadDeps } from '../../src/services/jobReads.js';
import { jobDecider } from '../../src/services/jobDecider.js';

export const CancelJobResponseSchema = z.object({
  job_id: z.uuid(),
  status: z.enum(['cancelled', 'cancelling']),
  message: z.string(),
  files_indexed: z.number().int().nonnegative(),
  chunks_created: z.number().int().nonnegative(),
  cancelled_at: z.iso.datetime({ offset: true }),
  project_id: z.string(),
});

export const cancelJobSurfaces = {
  name: 'cancel_job',
  cli: {
    command: ['jobs', 'cancel'],
    description: 'cancel a pending job, or ask a running one to stop',
    arguments: [{ name: 'jobId', field: 'job_id' }],
    print: { line: '{job_id}: {status}. {message}' },
  },
} as const satisfies OperationSurfaces;

/** Cancels a queued job at once; asks a running one to stop after its current file, keeping what it wrote. */
export const cancelJobOperation = (deps: JobReadDeps & { runner: JobRunner }) =>
  defineOperation({
    ...cancelJobSurfaces,
    title: 'Cancel an indexing job',
    description:
      'Cancels a pending job at once, or asks a running one to stop within seconds after its current batch; what was indexed is kept.',
    toolset: 'jobs',
    writes: true,
    scope: 'index:write',
    input: JobIdInputSchema,
    output: CancelJobResponseSchema,
    mcpErrors: 'jobs',
    run: async (rawInput, operation) => {
      const input = parseInput(JobIdInputSchema, rawInput);
      const jobId = input.job_id;
      const view = await readJobView(deps, jobId, input.project_id);
      const context = commandContext(operation.actor, { project: view.project, correlationId: operation.correlationId });
      const result = await handleCommand(deps.store, streamId('job', jobId), jobDecider, { type: 'CancelJob', jobId }, context, {
        retries: 3,
      });
      if (result.state.status === null) throw notFound(jobId);
      deps.runner.cancelRecorded(jobId);
      const { filesIndexed, chunksCreated } = result.state;
      const cancelled = result.state.status === 'cancelled';
      return {
        job_id: jobId,
        status: cancelled ? ('cancelled' as const) : ('cancelling' as const),
        message: cancelled
          ? `Job cancelled successfully. Partial data retained (${filesIndexed} files, ${chunksCreated} chunks).`
          : 'Cancellation requested. Job will stop within 5 seconds after finishing current batch.',
        files_indexed: filesIndexed,
        chunks_created: chunksCreated,
        cancelled_at: result.events[0]?.metadata.occurredAt ?? view.cancelledAt ?? context.now,
        project_id: view.project,
      };
    },
  });

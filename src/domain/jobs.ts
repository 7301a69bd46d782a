import { z } from 'zod';

export const JobPhaseSchema = z.enum(['scanning', 'chunking', 'embedding', 'writing']);

const counts = {
  filesScanned: z.number().int().nonnegative(),
  filesIndexed: z.number().int().nonnegative(),
  chunksCreated: z.number().int().nonnegative(),
};

const jobEvent = <T extends string, D extends z.ZodRawShape>(type: T, data: D) =>
  z.object({
    type: z.literal(type),
    schemaVersion: z.literal(1),
    data: z.object({ jobId: z.uuid(), ...data }),
  });

export const IndexingJobRequestedSchema = jobEvent('IndexingJobRequested', {
  repoPath: z.string().min(1),
  forceReindex: z.boolean(),
  include: z.array(z.string()),
  exclude: z.array(z.string()),
});
export const IndexingJobStartedSchema = jobEvent('IndexingJobStarted', { runnerId: z.string() });
export const IndexingJobProgressedSchema = jobEvent('IndexingJobProgressed', {
  phase: JobPhaseSchema,
  percentage: z.number().int().min(0).max(100),
  message: z.string(),
  ...counts,
});
export const IndexingJobBlockedSchema = jobEvent('IndexingJobBlocked', { reason: z.string() });
export const IndexingJobUnblockedSchema = jobEvent('IndexingJobUnblocked', {});
export const IndexingJobCompletedSchema = jobEvent('IndexingJobCompleted', {
  ...counts,
  filesSkipped: z.number().int().nonnegative(),
  filesRemoved: z.number().int().nonnegative(),
});
export const IndexingJobFailedSchema = jobEvent('IndexingJobFailed', {
  errorType: z.string(),
  errorMessage: z.string(),
});
export const IndexingJobCancellationRequestedSchema = jobEvent('IndexingJobCancellationRequested', {});
export const IndexingJobCancelledSchema = jobEvent('IndexingJobCancelled', {});

export const JobEventSchemas = [
  IndexingJobRequestedSchema,
  IndexingJobStartedSchema,
  IndexingJobProgressedSchema,
  IndexingJobBlockedSchema,
  IndexingJobUnblockedSchema,
  IndexingJobCompletedSchema,
  IndexingJobFailedSchema,
  IndexingJobCancellationRequestedSchema,
  IndexingJobCancelledSchema,
] as const;

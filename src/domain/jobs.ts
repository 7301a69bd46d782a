import { z } from 'zod';
import { AppError, IllegalStateError } from '../errors.js';
import type { Stored } from './eventEnvelope.js';

export const JobPhaseSchema = z.enum(['scanning', 'chunking', 'embedding', 'writing']);
export type JobPhase = z.infer<typeof JobPhaseSchema>;

export const JOB_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled', 'blocked'] as const;
export const JobStatusSchema = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatusSchema>;

export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];
/** Jobs a restarted server picks up again by itself. */
export const RESUMABLE_STATUSES: readonly JobStatus[] = ['running', 'blocked'];
export const isTerminal = (status: JobStatus | null): boolean => status !== null && TERMINAL_STATUSES.includes(status);

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

/** The job's project is its events' metadata `project`. */
export const IndexingJobRequestedSchema = jobEvent('IndexingJobRequested', {
  repoPath: z.string().min(1),
  forceReindex: z.boolean(),
  include: z.array(z.string()),
  exclude: z.array(z.string()),
});
/** A runner took the job: from pending, or again after a restart (from running or blocked). */
export const IndexingJobStartedSchema = jobEvent('IndexingJobStarted', { runnerId: z.string() });
export const IndexingJobProgressedSchema = jobEvent('IndexingJobProgressed', {
  phase: JobPhaseSchema,
  percentage: z.number().int().min(0).max(100),
  message: z.string(),
  ...counts,
  estimatedSecondsRemaining: z.number().nonnegative().optional(),
});
export const IndexingJobBlockedSchema = jobEvent('IndexingJobBlocked', { reason: z.string() });
export const IndexingJobUnblockedSchema = jobEvent('IndexingJobUnblocked', {});
/** Every scanned file is indexed, skipped or failed (events written before `filesFailed` have none failed). */
export const IndexingJobCompletedSchema = jobEvent('IndexingJobCompleted', {
  ...counts,
  filesSkipped: z.number().int().nonnegative(),
  filesFailed: z.number().int().nonnegative().optional(),
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

export type JobEvent = z.infer<(typeof JobEventSchemas)[number]>;
export type JobEventType = JobEvent['type'];
export const JOB_EVENT_TYPES = JobEventSchemas.map((s) => s.shape.type.value) as readonly JobEventType[];

/** A job as its own stream tells it: what the state machine and the runner decide on. */
export interface JobState {
  jobId: string | null;
  status: JobStatus | null;
  project: string | null;
  repoPath: string;
  forceReindex: boolean;
  include: string[];
  exclude: string[];
  runnerId: string | null;
  cancelRequested: boolean;
  filesScanned: number;
  filesIndexed: number;
  chunksCreated: number;
  createdAt: string | null;
}

export const initialJobState = (): JobState => ({
  jobId: null,
  status: null,
  project: null,
  repoPath: '',
  forceReindex: false,
  include: [],
  exclude: [],
  runnerId: null,
  cancelRequested: false,
  filesScanned: 0,
  filesIndexed: 0,
  chunksCreated: 0,
  createdAt: null,
});

/**
 * Which event may follow which status: the job tools' state machine. `blocked` is a waiting form of
 * `running`, so it may end the ways running does; a second `IndexingJobStarted` is a resume.
 */
const ALLOWED_FROM: Record<JobEventType, readonly (JobStatus | null)[]> = {
  IndexingJobRequested: [null],
  IndexingJobStarted: ['pending', 'running', 'blocked'],
  IndexingJobProgressed: ['running'],
  IndexingJobBlocked: ['running'],
  IndexingJobUnblocked: ['blocked'],
  IndexingJobCompleted: ['running'],
  IndexingJobFailed: ['running', 'blocked'],
  IndexingJobCancellationRequested: ['running', 'blocked'],
  IndexingJobCancelled: ['pending', 'running', 'blocked'],
};

export const canHappen = (type: JobEventType, status: JobStatus | null): boolean => ALLOWED_FROM[type].includes(status);

/** Refuses an event the state machine does not allow from the job's current status. */
export const assertTransition = (state: JobState, type: JobEventType): void => {
  if (canHappen(type, state.status)) return;
  throw new IllegalStateError(`Job ${state.jobId ?? ''} in status '${state.status ?? 'none'}' cannot take ${type}`, {
    job_id: state.jobId,
    current_status: state.status,
    allowed_statuses: ALLOWED_FROM[type].filter((s) => s !== null),
  });
};

export const evolveJob = (state: JobState, e: Stored<JobEvent>): JobState => {
  switch (e.type) {
    case 'IndexingJobRequested':
      return {
        ...state,
        jobId: e.data.jobId,
        status: 'pending',
        project: e.metadata.project,
        repoPath: e.data.repoPath,
        forceReindex: e.data.forceReindex,
        include: e.data.include,
        exclude: e.data.exclude,
        createdAt: e.metadata.occurredAt,
      };
    case 'IndexingJobStarted':
      return { ...state, status: 'running', runnerId: e.data.runnerId };
    case 'IndexingJobProgressed':
      return {
        ...state,
        filesScanned: e.data.filesScanned,
        filesIndexed: e.data.filesIndexed,
        chunksCreated: e.data.chunksCreated,
      };
    case 'IndexingJobBlocked':
      return { ...state, status: 'blocked' };
    case 'IndexingJobUnblocked':
      return { ...state, status: 'running' };
    case 'IndexingJobCompleted':
      return {
        ...state,
        status: 'completed',
        filesScanned: e.data.filesScanned,
        filesIndexed: e.data.filesIndexed,
        chunksCreated: e.data.chunksCreated,
      };
    case 'IndexingJobFailed':
      return { ...state, status: 'failed' };
    case 'IndexingJobCancellationRequested':
      return { ...state, cancelRequested: true };
    case 'IndexingJobCancelled':
      return { ...state, status: 'cancelled' };
    default: {
      const unexpected: never = e;
      return unexpected;
    }
  }
};

/** The same repository is already being indexed for the same project. */
export class DuplicateJobError extends AppError {
  override name = 'DuplicateJobError';
  constructor(message: string, details: Record<string, unknown>) {
    super('CONFLICT_ERROR', message, details);
  }
}

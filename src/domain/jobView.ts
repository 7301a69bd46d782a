import path from 'node:path';
import { z } from 'zod';
import type { StoredEvent } from './events.js';
import type { JobEvent, JobPhase, JobStatus } from './jobs.js';
import { ProjectIdSchema } from './workspace.js';
import type { Fold } from './asOf.js';
import { NotFoundError } from '../errors.js';

/** A job as status and list queries read it. Optional fields are absent until they have a value. */
export interface JobView {
  jobId: string;
  project: string;
  repoPath: string;
  repoName: string;
  forceReindex: boolean;
  status: JobStatus;
  /** The phase a running or blocked job is in; null before it starts and once it has ended. */
  phase: JobPhase | null;
  percentage: number;
  message: string;
  filesScanned: number;
  filesIndexed: number;
  chunksCreated: number;
  cancelRequested: boolean;
  createdAt: string;
  startedAt?: string;
  completedAt?: string;
  cancelledAt?: string;
  errorType?: string;
  errorMessage?: string;
  estimatedSecondsRemaining?: number;
}

/** How each job event changes the view: the jobs read model and as-of reads fold the same way. */
export const evolveJobView = (doc: JobView | null, event: StoredEvent): JobView | null => {
  const e = event as StoredEvent<JobEvent>;
  const at = e.metadata.occurredAt;
  if (e.type === 'IndexingJobRequested') {
    return {
      jobId: e.data.jobId,
      project: e.metadata.project,
      repoPath: e.data.repoPath,
      repoName: path.basename(e.data.repoPath) || e.data.repoPath,
      forceReindex: e.data.forceReindex,
      status: 'pending',
      phase: null,
      percentage: 0,
      message: 'Queued',
      filesScanned: 0,
      filesIndexed: 0,
      chunksCreated: 0,
      cancelRequested: false,
      createdAt: at,
    };
  }
  if (!doc) return null;
  const { estimatedSecondsRemaining: _eta, ...withoutEta } = doc;
  switch (e.type) {
    case 'IndexingJobStarted':
      return { ...doc, status: 'running', startedAt: doc.startedAt ?? at, message: 'Starting...' };
    case 'IndexingJobProgressed': {
      const { jobId: _id, ...progress } = e.data;
      return { ...withoutEta, ...progress };
    }
    case 'IndexingJobBlocked':
      return { ...withoutEta, status: 'blocked', message: `Blocked: ${e.data.reason}` };
    case 'IndexingJobUnblocked':
      return { ...doc, status: 'running', message: 'Resumed after the blocking resource came back' };
    case 'IndexingJobCompleted':
      return {
        ...withoutEta,
        status: 'completed',
        percentage: 100,
        phase: null,
        message:
          e.data.filesFailed
            ? `Indexing complete; ${e.data.filesFailed} of ${e.data.filesScanned} files could not be indexed (see the server log)`
            : 'Indexing complete',
        filesScanned: e.data.filesScanned,
        filesIndexed: e.data.filesIndexed,
        chunksCreated: e.data.chunksCreated,
        completedAt: at,
      };
    case 'IndexingJobFailed':
      return {
        ...withoutEta,
        status: 'failed',
        phase: null,
        message: 'Indexing failed',
        errorType: e.data.errorType,
        errorMessage: e.data.errorMessage,
        completedAt: at,
      };
    case 'IndexingJobCancellationRequested':
      return { ...doc, cancelRequested: true, cancelledAt: at, message: 'Cancellation requested' };
    case 'IndexingJobCancelled':
      return {
        ...withoutEta,
        status: 'cancelled',
        phase: null,
        message: 'Job cancelled',
        cancelledAt: doc.cancelledAt ?? at,
        completedAt: at,
      };
    default: {
      const unexpected: never = e;
      return unexpected;
    }
  }
};


/**
 * A running job whose runner is waiting out an outage shows as blocked at once: on a full disk
 * neither its IndexingJobBlocked nor the read model's update may be writable until space is back.
 */
export const withLiveOutage = (job: JobView, liveOutage: ((jobId: string) => string | undefined) | undefined): JobView => {
  const reason = job.status === 'running' ? liveOutage?.(job.jobId) : undefined;
  if (reason === undefined) return job;
  const { estimatedSecondsRemaining: _eta, ...blocked } = job;
  return { ...blocked, status: 'blocked', message: `Blocked: ${reason}` };
};

export const JobIdInputSchema = z.object({
  job_id: z.uuid().describe('The job id returned by start_indexing_background'),
  project_id: ProjectIdSchema.optional().describe('When given, the job must belong to this project'),
});

/** A job as its stream tells it, folded the way the jobs read model folds it. */
export const jobViewFold: Fold<JobView | null, JobEvent> = {
  initialState: () => null,
  evolve: evolveJobView,
};

export const notFound = (jobId: string) =>
  new NotFoundError(`Job not found: ${jobId}`, {
    job_id: jobId,
    suggestion: 'Verify job_id is correct and job exists in current project workspace',
  });

import path from 'node:path';
import type { StoredEvent } from '../src/domain/events.js';
import { JOB_EVENT_TYPES, type JobEvent, type JobPhase, type JobStatus } from '../src/domain/jobs.js';
import type { DocumentProjection } from '../src/ports/projections.js';

/** A job as status and list queries read it. Optional fields are absent until they have a value. */
export interface JobView {
  jobId: string;
  project: string;
  repoPath: string;
  repoName: string;
  forceReindex: boolean;
  status: JobStatus;
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

const evolve = (doc: JobView | null, event: StoredEvent): JobView | null => {
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
        phase: 'writing',
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

/** One document per indexing job: what get_job_status and list_background_jobs answer from. */
export const jobsProjection: DocumentProjection<JobView> = {
  name: 'jobs',
  version: 1,
  eventTypes: JOB_EVENT_TYPES,
  documentIds: (event) => [(event.data as { jobId: string }).jobId],
  evolve,
};

import type { AsOf } from '../domain/asOf.js';
import { streamId } from '../domain/events.js';
import { isTerminal } from '../domain/jobs.js';
import { jobViewFold, notFound, type JobView } from '../domain/jobView.js';
import { loadAggregateAsOf } from '../engine/asOf.js';
import type { EventStore } from '../ports/eventStore.js';
import type { ReadModels } from '../ports/projections.js';
import type { CancelledWork } from '../ports/searchIndex.js';

export interface JobReadDeps {
  store: EventStore;
  readModels: ReadModels;
  /** The outage a running job is waiting out in this process, known before its IndexingJobBlocked can be written. */
  liveOutage?: (jobId: string) => string | undefined;
}

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

/**
 * The indexing jobs cancelled now, each with its repository: a job whose cancel is asked for counts
 * as cancelled until it ends. Every event a job appends carries its id as correlation id, so a
 * chunk's work is the job that stored it. `hasJobs` is false in a deployment without the jobs feature.
 */
export const cancelledJobs =
  (readModels: ReadModels, hasJobs: () => boolean): CancelledWork =>
  async (workIds) => {
    if (!hasJobs()) return new Map();
    const jobs = await readModels.getMany<JobView>('jobs', workIds);
    return new Map(
      [...jobs]
        .filter(([, job]) => job.status === 'cancelled' || (job.cancelRequested && !isTerminal(job.status)))
        .map(([id, job]) => [id, job.repoPath]),
    );
  };

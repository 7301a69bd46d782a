import type { Deferral } from '../../infra/search/postgresChunkIndex.js';
import { jobsProjection } from '../../projections/jobs.js';
import { isTerminal } from '../domain/jobs.js';
import type { JobView } from '../domain/jobView.js';
import type { ReadModels } from '../ports/projections.js';

/**
 * The semantic index leaves the chunks of a cancelled indexing job unembedded (keyword search has
 * them), set aside under the job's repository until a job for that repository is requested again:
 * the cancel stops the job's embedding too, and indexing the repository again completes it. A job
 * whose cancel is asked for counts as cancelled until it ends. Every event a job appends carries
 * its id as correlation id. `hasJobs` is false in a deployment without the jobs feature.
 */
export const cancelledJobsDeferral = (readModels: ReadModels, hasJobs: () => boolean): Deferral => ({
  resumedBy: ['IndexingJobRequested'],
  cancelled: async (workIds) => {
    if (!hasJobs()) return new Map();
    const jobs = await readModels.getMany<JobView>(jobsProjection.name, workIds);
    return new Map(
      [...jobs]
        .filter(([, job]) => job.status === 'cancelled' || (job.cancelRequested && !isTerminal(job.status)))
        .map(([id, job]) => [id, job.repoPath]),
    );
  },
  resumes: (event) =>
    event.type === 'IndexingJobRequested'
      ? { project: event.metadata.project, key: event.data.repoPath, workId: event.data.jobId }
      : null,
});

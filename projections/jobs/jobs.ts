import { JOB_EVENT_TYPES } from '../../src/domain/jobs.js';
import { evolveJobView, type JobView } from '../../src/domain/jobView.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

/** One document per indexing job: what get_job_status and list_background_jobs answer from. */
export const jobsProjection: DocumentProjection<JobView> = {
  name: 'jobs',
  version: 2,
  eventTypes: JOB_EVENT_TYPES,
  documentIds: (event) => [(event.data as { jobId: string }).jobId],
  evolve: evolveJobView,
};

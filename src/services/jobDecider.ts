import {
  assertTransition,
  evolveJob,
  initialJobState,
  type JobEvent,
  type JobState,
} from '../domain/jobs.js';
import type { Decider } from '../engine/commands.js';
import { IllegalStateError } from '../errors.js';

type Without<E, K extends string> = E extends { data: infer D } ? Omit<E, 'data' | 'schemaVersion'> & { data: Omit<D, K> } : never;

/** A lifecycle step of a job, as the runner or a caller asks for it: the event it would become. */
export type JobTransition = Without<JobEvent, 'jobId'>;

/** A caller's cancel: a queued job is cancelled at once, a running one is asked to stop. */
export type CancelJob = { type: 'CancelJob' };

export type JobCommand = (JobTransition & { jobId: string }) | (CancelJob & { jobId: string });

const cancel = (state: JobState, jobId: string): JobEvent[] => {
  if (state.status === 'pending') return [{ type: 'IndexingJobCancelled', schemaVersion: 1, data: { jobId } }];
  if (state.status === 'running' || state.status === 'blocked') {
    if (state.cancelRequested) return [];
    return [{ type: 'IndexingJobCancellationRequested', schemaVersion: 1, data: { jobId } }];
  }
  throw new IllegalStateError(
    `Cannot cancel job in status '${state.status ?? 'none'}'. Only pending/running jobs can be cancelled.`,
    { job_id: jobId, current_status: state.status, allowed_statuses: ['pending', 'running', 'blocked'] },
  );
};

/** A job may complete only with every scanned file counted as indexed, skipped or failed. */
const assertAccounted = ({ filesScanned, filesIndexed, filesSkipped, filesFailed = 0 }: CompletedCounts) => {
  if (filesIndexed + filesSkipped + filesFailed === filesScanned) return;
  throw new IllegalStateError(
    `A completed job must account for every scanned file: ${filesScanned} scanned, but ${filesIndexed} indexed, ` +
      `${filesSkipped} skipped and ${filesFailed} failed`,
    { files_scanned: filesScanned, files_indexed: filesIndexed, files_skipped: filesSkipped, files_failed: filesFailed },
  );
};
type CompletedCounts = Extract<JobTransition, { type: 'IndexingJobCompleted' }>['data'];

/** The job state machine: every step is checked against the job's current status. */
export const jobDecider: Decider<JobState, JobCommand, JobEvent> = {
  initialState: initialJobState,
  evolve: evolveJob,
  decide: (command, state) => {
    if (command.type === 'CancelJob') return cancel(state, command.jobId);
    assertTransition(state, command.type);
    if (command.type === 'IndexingJobCompleted') assertAccounted(command.data);
    const { jobId, type, data } = command;
    return [{ type, schemaVersion: 1, data: { ...data, jobId } } as JobEvent];
  },
};

import type { StoredEvent } from '../domain/events.js';
import { newId } from '../domain/ids.js';
import type { JobEvent, JobEventType, JobStatus } from '../domain/jobs.js';
import type { AdmittedJob, JobRunner } from '../ports/jobRunner.js';
import { commandContext } from '../engine/commands.js';
import { ConcurrencyError, IllegalStateError, UnavailableError } from '../errors.js';
import type { Position } from '../domain/position.js';
import { soleReplica, type ReplicaLocks } from '../ports/replicaLocks.js';
import { inBackground } from '../ports/database.js';
import { backoff, type Backoff } from './backoff.js';
import { openJobStream, type JobStream } from './jobStream.js';
import { connectorOfSyncJob } from '../../commands/jobs/syncConnector.js';
import { runIndexingJob, type IndexingDeps, type RunControl } from './runIndexingJob.js';

export interface JobRunnerOptions extends IndexingDeps {
  maxConcurrent: number;
  runnerId?: string;
  /** Runs a connector's sync job (its `repoPath` names the connector); absent where no remote connectors are wired. */
  syncConnector?: (job: JobStream, control: RunControl) => Promise<void>;
  /** A job runs in the one replica that holds its lock; jobs whose replica died are taken over. */
  locks?: ReplicaLocks;
}

interface Tracked extends AdmittedJob {
  status: JobStatus;
  cancel: boolean;
  outage?: string;
  run?: Promise<void>;
}

const LIFECYCLE: readonly JobEventType[] = [
  'IndexingJobRequested',
  'IndexingJobStarted',
  'IndexingJobBlocked',
  'IndexingJobUnblocked',
  'IndexingJobCompleted',
  'IndexingJobFailed',
  'IndexingJobCancelled',
];

const STATUS_AFTER: Partial<Record<JobEventType, JobStatus>> = {
  IndexingJobRequested: 'pending',
  IndexingJobStarted: 'running',
  IndexingJobBlocked: 'blocked',
  IndexingJobUnblocked: 'running',
  IndexingJobCompleted: 'completed',
  IndexingJobFailed: 'failed',
  IndexingJobCancelled: 'cancelled',
};

/** Unfinished jobs from the lifecycle events of `$all`, in the order they were requested. */
const unfinishedJobs = async (deps: IndexingDeps): Promise<Tracked[]> => {
  const jobs = new Map<string, Tracked>();
  let from: Position | undefined;
  for (;;) {
    const page: StoredEvent[] = await deps.store.readAll({
      ...(from ? { from } : {}),
      maxCount: 5_000,
      filter: { categories: ['job'], eventTypes: LIFECYCLE },
    });
    for (const event of page as StoredEvent<JobEvent>[]) {
      const { jobId } = event.data;
      if (event.type === 'IndexingJobRequested') {
        jobs.set(jobId, { jobId, project: event.metadata.project, repoPath: event.data.repoPath, status: 'pending', cancel: false });
      } else {
        const job = jobs.get(jobId);
        const status = STATUS_AFTER[event.type];
        if (job && status) job.status = status;
      }
    }
    if (page.length < 5_000) break;
    from = page[page.length - 1]!.position;
  }
  return [...jobs.values()].filter((j) => j.status === 'pending' || j.status === 'running' || j.status === 'blocked');
};

/** How often, beside other replicas, a runner looks for jobs whose replica died. */
const ORPHAN_SCAN_MS = 5_000;

export const createJobRunner = ({ maxConcurrent, runnerId = newId(), locks = soleReplica, syncConnector, ...deps }: JobRunnerOptions): JobRunner => {
  const lockOf = (jobId: string) => `job:${jobId}`;
  const active = new Map<string, Tracked>();
  // Until start(), jobs are only queued: a one-shot CLI process records jobs without running them.
  let started = false;
  let stopping = false;
  const actor = { subject: `job-runner:${runnerId}`, tenant: null, via: 'job' as const };

  const running = () => [...active.values()].filter((j) => j.run !== undefined);
  /** Jobs waiting for a slot: new ones, and resumed ones not claimed yet. */
  const queue = () => [...active.values()].filter((j) => j.run === undefined);
  let claimDelays: Backoff | undefined;
  let claimRetry: NodeJS.Timeout | undefined;

  const execute = (job: Tracked, stream: JobStream) => {
    job.status = 'running';
    const run = syncConnector && connectorOfSyncJob(job.repoPath) ? syncConnector : runIndexingJob.bind(null, deps);
    const control: RunControl = {
      runnerId,
      cancelRequested: () => job.cancel,
      stopping: () => stopping,
      waiting: (reason) => {
        job.outage = reason;
      },
    };
    // The job's reads and writes give way to requests' on an embedded database.
    job.run = inBackground(() => run(stream, control))
      .catch((error: unknown) => deps.logger.error({ jobId: job.jobId, err: error }, 'indexing job crashed'))
      .finally(() => {
        active.delete(job.jobId);
        void locks.release(lockOf(job.jobId));
        void fillSlots();
      });
  };

  /** Appends IndexingJobStarted for this runner; false when the job is no longer ours to run. */
  const claim = async (job: Tracked): Promise<boolean> => {
    if (!(await locks.tryAcquire(lockOf(job.jobId)))) {
      deps.logger.info({ jobId: job.jobId }, 'job not claimed: another replica runs it');
      active.delete(job.jobId);
      return false;
    }
    try {
      return await claimHeld(job);
    } catch (error) {
      await locks.release(lockOf(job.jobId));
      throw error;
    }
  };
  const claimHeld = async (job: Tracked): Promise<boolean> => {
    const stream = await openJobStream(deps.store, job.jobId);
    try {
      await stream.apply({ type: 'IndexingJobStarted', data: { runnerId } }, commandContext(actor, {
        project: job.project,
        correlationId: job.jobId,
      }));
    } catch (error) {
      if (error instanceof ConcurrencyError || error instanceof IllegalStateError) {
        deps.logger.info({ jobId: job.jobId, reason: error.message }, 'job not claimed');
        active.delete(job.jobId);
        await locks.release(lockOf(job.jobId));
        return false;
      }
      throw error;
    }
    execute(job, stream);
    return true;
  };

  let filling = Promise.resolve();
  /** Starts queued jobs while slots are free; one pass at a time, so the limit holds. */
  const fillSlots = (): Promise<void> => {
    filling = filling.then(async () => {
      while (started && !stopping && running().length < maxConcurrent) {
        const next = queue().find((j) => !j.cancel);
        if (!next) return;
        try {
          await claim(next);
          claimDelays = undefined;
        } catch (error) {
          if (error instanceof UnavailableError) {
            retryClaimsLater(error);
            return;
          }
          deps.logger.error({ jobId: next.jobId, err: error }, 'could not start job');
          active.delete(next.jobId);
        }
      }
    });
    return filling;
  };
  const retryClaimsLater = (error: UnavailableError) => {
    claimDelays ??= backoff(deps.retryInitialMs, deps.retryMaxMs);
    const retryInMs = claimDelays.next();
    deps.logger.warn({ reason: error.message, retryInMs }, 'queued jobs wait for the database');
    clearTimeout(claimRetry);
    claimRetry = setTimeout(() => void fillSlots(), retryInMs);
  };

  /** Resumes the jobs another replica was running or waiting on: each whose lock is free lost its replica. */
  let orphanScan: NodeJS.Timeout | undefined;
  const resumeOrphans = async () => {
    const unfinished = await unfinishedJobs(deps);
    for (const job of unfinished.filter((j) => j.status !== 'pending' && !active.has(j.jobId))) {
      if (!started || stopping || running().length >= maxConcurrent) return;
      active.set(job.jobId, job);
      await claim(job).catch((error: unknown) => {
        deps.logger.error({ jobId: job.jobId, err: error }, 'could not resume job');
        active.delete(job.jobId);
      });
    }
  };

  return {
    runnerId,
    activeJobFor: (project, repoPath) => {
      // A job asked to cancel still holds its repository until it has stopped.
      const found = [...active.values()].find((j) => j.project === project && j.repoPath === repoPath && (!j.cancel || j.run !== undefined));
      return found && { jobId: found.jobId, status: found.outage ? 'blocked' : found.status };
    },
    async admit(job) {
      if (!active.has(job.jobId)) active.set(job.jobId, { ...job, status: 'pending', cancel: false });
      await fillSlots();
      const tracked = active.get(job.jobId);
      const runningCount = running().length;
      if (tracked?.run !== undefined) return { status: 'running', queuePosition: 0, runningCount };
      const position = queue().findIndex((j) => j.jobId === job.jobId) + 1;
      return { status: 'pending', queuePosition: Math.max(position, 1), runningCount };
    },
    outageOf: (jobId) => active.get(jobId)?.outage,
    cancelRecorded(jobId) {
      const job = active.get(jobId);
      if (!job) return;
      job.cancel = true;
      if (job.run === undefined) active.delete(jobId);
    },
    async start() {
      if (started) return;
      started = true;
      stopping = false;
      const unfinished = await unfinishedJobs(deps);
      for (const job of unfinished) if (!active.has(job.jobId)) active.set(job.jobId, job);
      // Jobs a previous process was running take their slots back first.
      for (const job of unfinished.filter((j) => j.status !== 'pending')) {
        await claim(job).catch((error: unknown) => {
          deps.logger.error({ jobId: job.jobId, err: error }, 'could not resume job');
          // While the database is unavailable it stays queued; otherwise it is not this runner's to run.
          if (!(error instanceof UnavailableError)) active.delete(job.jobId);
        });
      }
      await fillSlots();
      if (locks !== soleReplica) {
        orphanScan = setInterval(() => {
          filling = filling.then(resumeOrphans).catch((error: unknown) => {
            deps.logger.warn({ err: error }, 'could not look for jobs to take over');
          });
        }, ORPHAN_SCAN_MS);
      }
    },
    async close() {
      stopping = true;
      started = false;
      clearTimeout(claimRetry);
      clearInterval(orphanScan);
      await filling;
      await Promise.all(running().map((j) => j.run ?? Promise.resolve()));
      active.clear();
    },
  };
};

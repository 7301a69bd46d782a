import type { JobStatus } from '../domain/jobs.js';

export interface AdmittedJob {
  jobId: string;
  project: string;
  repoPath: string;
}

export interface Admission {
  status: 'pending' | 'running';
  /** 1-based place in the queue of pending jobs; 0 when running. */
  queuePosition: number;
  runningCount: number;
}

/**
 * The process manager of indexing jobs: it owns the jobs it runs (claiming each with an
 * expected-revision append), runs at most `maxConcurrent` at once, queues the rest in order of
 * request, and on start resumes the jobs a previous process left running or blocked. A job it cannot
 * claim while the database is unavailable stays queued and is tried again with doubling delays.
 */
export interface JobRunner {
  readonly runnerId: string;
  /** The unfinished job for this repository in this project, if any, including one stopping after a cancel. */
  activeJobFor(project: string, repoPath: string): { jobId: string; status: JobStatus } | undefined;
  /** Takes a newly requested job: runs it at once if a slot is free, else queues it. */
  admit(job: AdmittedJob): Promise<Admission>;
  /** A cancel was recorded: a queued job leaves the queue, a running one stops after its current file. */
  cancelRecorded(jobId: string): void;
  /** Why a job this runner runs is waiting (a full disk, an embedder down), while it waits; whether or not that is recorded yet. */
  outageOf(jobId: string): string | undefined;
  start(): Promise<void>;
  /** Stops running jobs without an outcome (a restart resumes them) and waits for them. */
  close(): Promise<void>;
}

import type { JobStatus } from '../domain/jobs.js';
import type { OperationContext } from '../operations.js';

/** A background job as the project's job list shows it. */
export interface IndexJobItem {
  job_id: string;
  repo_path: string;
  status: string;
  progress_percentage: number;
  files_indexed: number;
  created_at: string;
  started_at?: string;
  completed_at?: string;
}

/** A job just requested: its id, whether it runs or waits, and how long it may take. */
export interface RequestedJob {
  job_id: string;
  status: string;
  estimated_duration_seconds?: number;
}

/**
 * The caller's project's background jobs, for index control. Every method throws UnavailableError
 * when the deployment runs no background jobs.
 */
export interface IndexJobs {
  /** The project's jobs, newest first, those in `status` when given. */
  list(context: OperationContext, status?: JobStatus): Promise<IndexJobItem[]>;
  /** Indexes a local folder (already checked against the readable roots). */
  index(root: string, force: boolean, context: OperationContext): Promise<RequestedJob>;
  /** Syncs a remote connector. */
  sync(connectorId: string, context: OperationContext): Promise<RequestedJob>;
  cancel(jobId: string, context: OperationContext): Promise<void>;
}

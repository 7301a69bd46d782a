import { z } from 'zod';
import { JobStatusSchema } from '../domain/jobs.js';
import type { JobView } from '../domain/jobView.js';
import type { CliPrint } from '../operations.js';
import { databaseNameOf } from '../domain/workspace.js';

const timestamp = z.iso.datetime({ offset: true });
const count = z.number().int().nonnegative();

/** The job tools' shapes: a field the schema types as a string but that has no value yet is omitted. */
export const JobStatusResponseSchema = z.object({
  job_id: z.uuid(),
  status: JobStatusSchema,
  progress_percentage: z.number().int().min(0).max(100),
  progress_message: z.string(),
  files_scanned: count,
  files_indexed: count,
  chunks_created: count,
  created_at: timestamp,
  started_at: timestamp.optional(),
  completed_at: timestamp.optional(),
  cancelled_at: timestamp.optional(),
  error_message: z.string().optional(),
  error_type: z.string().optional(),
  estimated_time_remaining_seconds: z.number().nonnegative().optional(),
  project_id: z.string(),
  database_name: z.string(),
});
export type JobStatusResponse = z.infer<typeof JobStatusResponseSchema>;

export const JobListItemSchema = z.object({
  job_id: z.uuid(),
  repo_path: z.string(),
  repo_name: z.string(),
  status: JobStatusSchema,
  progress_percentage: z.number().int().min(0).max(100),
  files_indexed: count,
  chunks_created: count,
  created_at: timestamp,
  started_at: timestamp.optional(),
  completed_at: timestamp.optional(),
  project_id: z.string(),
});
export type JobListItem = z.infer<typeof JobListItemSchema>;

const defined = <T extends Record<string, unknown>>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

export const jobStatusResponse = (job: JobView): JobStatusResponse =>
  defined({
    job_id: job.jobId,
    status: job.status,
    progress_percentage: job.percentage,
    progress_message: job.message,
    files_scanned: job.filesScanned,
    files_indexed: job.filesIndexed,
    chunks_created: job.chunksCreated,
    created_at: job.createdAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    cancelled_at: job.cancelledAt,
    error_message: job.errorMessage,
    error_type: job.errorType,
    estimated_time_remaining_seconds: job.estimatedSecondsRemaining,
    project_id: job.project,
    database_name: databaseNameOf(job.project),
  });

export const jobListItem = (job: JobView): JobListItem =>
  defined({
    job_id: job.jobId,
    repo_path: job.repoPath,
    repo_name: job.repoName,
    status: job.status,
    progress_percentage: job.percentage,
    files_indexed: job.filesIndexed,
    chunks_created: job.chunksCreated,
    created_at: job.createdAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    project_id: job.project,
  });

/** `database_name` names the project's workspace for the job tools; the CLI has no use for it. */
export const withoutDatabaseName = <T extends object>(response: T): Omit<T, 'database_name'> => {
  const { database_name: _name, ...rest } = response as T & { database_name?: string };
  return rest;
};

/** How `ctx` prints a job's status: absent fields are left out. */
export const jobStatusPrint = {
  fields: {
    job: '{job_id}',
    status: '{status}',
    progress: '{progress_percentage}% {progress_message}',
    project: '{project_id}',
    files_scanned: '{files_scanned}',
    files_indexed: '{files_indexed}',
    chunks_created: '{chunks_created}',
    created_at: '{created_at}',
    started_at: '{started_at}',
    completed_at: '{completed_at}',
    cancelled_at: '{cancelled_at}',
    error_message: '{error_message}',
    error_type: '{error_type}',
    estimated_time_remaining_seconds: '{estimated_time_remaining_seconds}',
  },
} as const satisfies CliPrint;

/** Index control's status: the project's running job, if any, and its last completed one. */
export const IndexStatusResponseSchema = z.object({
  status: z.enum(['running', 'idle']),
  current_job: z
    .object({
      id: z.string(),
      started_at: z.string().nullable(),
      progress: z.object({
        completed: z.number(),
        total: z.number(),
        current_connector: z.string().nullable(),
      }),
    })
    .nullable(),
  last_completed: z
    .object({
      finished_at: z.string().nullable(),
      duration_minutes: z.number().nullable(),
      documents_processed: z.number().int(),
    })
    .nullable(),
});

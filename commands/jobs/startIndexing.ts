import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { streamId } from '../../src/domain/events.js';
import { newId } from '../../src/domain/ids.js';
import { DuplicateJobError, isTerminal } from '../../src/domain/jobs.js';
import { jobDecider } from '../../src/services/jobDecider.js';
import { commandContext, runCommand, unread } from '../../src/engine/commands.js';
import { ValidationError } from '../../src/errors.js';
import type { ReadableRoots } from '../../src/ports/readableRoots.js';
import { parseInput } from '../../src/validation.js';
import type { JobRunner } from '../../src/ports/jobRunner.js';
import { ProjectIdSchema, resolveProject } from '../../src/domain/workspace.js';
import { jobStatusPrint, withoutDatabaseName, type JobStatusResponse } from '../../src/services/jobResponses.js';
import { defineOperation, type OperationContext, type OperationSurfaces } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import type { EventStore } from '../../src/ports/eventStore.js';

export const StartIndexingInputSchema = z.object({
  repo_path: z.string().min(1).describe('Absolute path of the repository (a directory) to index, inside the folders the server’s `ingest.roots` setting names'),
  project_id: ProjectIdSchema.optional(),
  force_reindex: z.boolean().default(false).describe('Re-ingest every file, even those whose content is unchanged'),
  include_patterns: z.array(z.string().min(1)).default([]).describe('Globs of files to index (relative to the repository)'),
  exclude_patterns: z.array(z.string().min(1)).default([]).describe('Globs of files to leave out (default: node_modules)'),
});

export const StartIndexingResponseSchema = z.object({
  job_id: z.uuid(),
  status: z.enum(['pending', 'running']),
  message: z.string(),
  estimated_duration_seconds: z.number().nonnegative().optional(),
  project_id: z.string(),
  database_name: z.string(),
});

const invalidPath = (message: string, value: string, suggestion: string) =>
  new ValidationError(message, { field: 'repo_path', value, suggestion });

/**
 * An absolute path to a readable directory inside the folders ingestion may read, or the seed's
 * VALIDATION_ERROR saying why not. Whether a path outside them exists is not told.
 */
export const checkRepoPath = (repoPath: string, readable: ReadableRoots): string => {
  if (!path.isAbsolute(repoPath)) {
    throw invalidPath(
      `Repository path must be absolute: ${repoPath}`,
      repoPath,
      "Provide absolute path starting with '/' (POSIX) or drive letter (Windows)",
    );
  }
  const resolved = readable.resolve(repoPath, { field: 'repo_path' });
  let isDirectory: boolean;
  try {
    isDirectory = statSync(resolved).isDirectory();
  } catch {
    throw invalidPath(`Repository path does not exist: ${repoPath}`, repoPath, 'Check the path and try again');
  }
  if (!isDirectory) {
    throw invalidPath(`Repository path is not a directory: ${repoPath}`, repoPath, 'Give the folder that holds the repository, not a file in it');
  }
  try {
    accessSync(resolved, constants.R_OK | constants.X_OK);
  } catch {
    throw invalidPath(`Repository directory cannot be read: ${repoPath}`, repoPath, 'Grant read access to the directory');
  }
  return resolved;
};

export interface StartIndexingDeps extends JobRequestDeps {
  readable: ReadableRoots;
}

export interface JobRequestDeps {
  store: EventStore;
  runner: JobRunner;
  /**
   * Waits (within a bound) until the job's status read model has applied every event so far: the
   * answer and a get_job_status right after it then tell the same status.
   */
  statusSettled: () => Promise<void>;
}

type Started = z.infer<typeof StartIndexingResponseSchema>;

const bar = (percentage: number, width = 30) => {
  const filled = Math.round((percentage / 100) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percentage).padStart(3)}%`;
};

export const startIndexingSurfaces = {
  name: 'start_indexing_background',
  cli: {
    command: ['index'],
    description: 'index a repository as a background job; --follow runs it here with a live progress bar',
    arguments: [{ name: 'path', field: 'repo_path', description: 'the repository folder' }],
    options: [
      { flags: '-p, --project <project>', field: 'project_id', description: 'project workspace', default: DEFAULT_PROJECT },
      { flags: '--force', field: 'force_reindex', description: 're-ingest every file, even unchanged ones' },
      { flags: '--include <globs...>', field: 'include_patterns', description: 'only these files' },
      { flags: '--exclude <globs...>', field: 'exclude_patterns', description: 'leave these files out' },
    ],
    // The path is the working directory's, wherever the job runs.
    prepare: (input) => ({ ...input, repo_path: path.resolve(input.repo_path as string) }),
    shown: (started: Started) => withoutDatabaseName(started),
    print: {
      line:
        'Started job {job_id} ({status}) in project {project_id}.\n' +
        'It runs while `ctx serve` runs (`ctx index --follow` runs it here); `ctx jobs show {job_id}` shows its progress.',
    },
    follow: {
      flags: '-f, --follow',
      description: 'run the job in this process and show its progress until it ends',
      operation: 'get_job_status',
      input: (started: Started) => ({ job_id: started.job_id }),
      progress: (status: JobStatusResponse) => `${bar(status.progress_percentage)} ${status.status}: ${status.progress_message}`,
      done: (status: JobStatusResponse) => isTerminal(status.status),
      failed: (status: JobStatusResponse) => status.status !== 'completed',
      print: jobStatusPrint,
    },
  },
} as const satisfies OperationSurfaces;

/** Records a new indexing job and hands it to the runner: it answers at once with the job id. */
export const startIndexingOperation = ({ readable, ...deps }: StartIndexingDeps) =>
  defineOperation({
    ...startIndexingSurfaces,
    title: 'Start background indexing',
    description:
      'Starts indexing a repository in the background and returns a job id at once; follow it with get_job_status. At most a few jobs run at once, the rest wait in a queue.',
    toolset: 'jobs',
    writes: true,
    scope: 'index:write',
    input: StartIndexingInputSchema,
    output: StartIndexingResponseSchema,
    mcpErrors: 'jobs',
    run: async (rawInput, operation) => {
      const input = parseInput(StartIndexingInputSchema, rawInput);
      const repoPath = checkRepoPath(input.repo_path, readable);
      const workspace = resolveProject(input.project_id);
      const started = await startRepositoryJob(deps, operation, workspace.project_id, {
        repoPath,
        forceReindex: input.force_reindex,
        include: input.include_patterns,
        exclude: input.exclude_patterns,
      });
      return { ...started, ...workspace };
    },
  });

/**
 * Starts a job of a repository (or a connector's sync) unless one of it is already active in the
 * project: the answer's id, status and message, as start_indexing_background gives them.
 */
export const startRepositoryJob = async (
  deps: JobRequestDeps,
  caller: Pick<OperationContext, 'actor' | 'correlationId'>,
  project: string,
  request: JobRequest,
) => {
  const duplicate = deps.runner.activeJobFor(project, request.repoPath);
  if (duplicate) {
    throw new DuplicateJobError(`Repository is already being indexed in project '${project}': job ${duplicate.jobId}`, {
      job_id: duplicate.jobId,
      current_status: duplicate.status,
      field: 'repo_path',
      value: request.repoPath,
      suggestion: 'Follow the existing job with get_job_status, or cancel it first',
    });
  }
  const { jobId, admission } = await requestJob(deps, caller, project, request);
  return {
    job_id: jobId,
    status: admission.status,
    message:
      admission.status === 'running'
        ? 'Job started successfully'
        : `Job queued at position ${admission.queuePosition} (${admission.runningCount} jobs currently running)`,
  };
};

/** What a job is asked to index: a repository (or a connector's sync job path), with its patterns. */
export interface JobRequest {
  repoPath: string;
  forceReindex: boolean;
  include: string[];
  exclude: string[];
}

/** Records a job's request in its own stream and hands it to the runner: how every kind of job starts. */
export const requestJob = async (
  { store, runner, statusSettled }: { store: EventStore; runner: Pick<JobRunner, 'admit'>; statusSettled: () => Promise<void> },
  caller: Pick<OperationContext, 'actor' | 'correlationId'>,
  project: string,
  request: JobRequest,
) => {
  const jobId = newId();
  const context = commandContext(caller.actor, { project, correlationId: caller.correlationId });
  const command = { type: 'IndexingJobRequested', jobId, data: request } as const;
  await runCommand(
    store,
    streamId('job', jobId),
    unread(jobDecider.initialState()),
    (state) => ({ events: jobDecider.decide(command, state, context), result: undefined }),
    context,
  );
  const admission = await runner.admit({ jobId, project, repoPath: request.repoPath });
  await statusSettled();
  return { jobId, admission };
};

import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { streamId, validateEvent } from '../src/domain/events.js';
import { newId } from '../src/domain/ids.js';
import { DuplicateJobError } from '../src/domain/jobs.js';
import { commandContext, metadataFor } from '../src/engine/commands.js';
import { ValidationError } from '../src/errors.js';
import type { ReadableRoots } from '../src/ports/readableRoots.js';
import { parseInput } from '../src/validation.js';
import type { JobRunner } from '../src/ports/jobRunner.js';
import { ProjectIdSchema, resolveProject } from '../src/domain/workspace.js';
import { defineOperation } from '../src/operations.js';
import type { EventStore } from '../src/ports/eventStore.js';

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
const checkRepoPath = (repoPath: string, readable: ReadableRoots): string => {
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

export interface StartIndexingDeps {
  store: EventStore;
  runner: JobRunner;
  readable: ReadableRoots;
}

/** Records a new indexing job and hands it to the runner: it answers at once with the job id. */
export const startIndexingOperation = ({ store, runner, readable }: StartIndexingDeps) =>
  defineOperation({
    name: 'start_indexing_background',
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
      const project = workspace.project_id;
      const duplicate = runner.activeJobFor(project, repoPath);
      if (duplicate) {
        throw new DuplicateJobError(`Repository is already being indexed in project '${project}': job ${duplicate.jobId}`, {
          job_id: duplicate.jobId,
          current_status: duplicate.status,
          field: 'repo_path',
          value: repoPath,
          suggestion: 'Follow the existing job with get_job_status, or cancel it first',
        });
      }
      const jobId = newId();
      const stream = streamId('job', jobId);
      const context = commandContext(operation.actor, { project, correlationId: operation.correlationId });
      const event = validateEvent({
        type: 'IndexingJobRequested',
        schemaVersion: 1,
        data: {
          jobId,
          repoPath,
          forceReindex: input.force_reindex,
          include: input.include_patterns,
          exclude: input.exclude_patterns,
        },
      });
      await store.append(stream, [{ ...event, metadata: metadataFor(context, { streamId: stream, expected: 'no_stream', index: 0 }) }], 'no_stream');
      const admission = await runner.admit({ jobId, project, repoPath });
      return {
        job_id: jobId,
        status: admission.status,
        message:
          admission.status === 'running'
            ? 'Job started successfully'
            : `Job queued at position ${admission.queuePosition} (${admission.runningCount} jobs currently running)`,
        ...workspace,
      };
    },
  });

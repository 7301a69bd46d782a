import path from 'node:path';
import { Option, type Command } from 'commander';
import type { z } from 'zod';
import { createHttpEmbedder } from '../../infra/embeddings/httpEmbedder.js';
import { readLiveCheckpoint } from '../../infra/postgres/checkpoints.js';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { cancelJobOperation } from '../../commands/cancelJob.js';
import { startIndexingOperation } from '../../commands/startIndexing.js';
import { syncConnectorOperation } from '../../commands/syncConnector.js';
import { jobsProjection } from '../../projections/jobs.js';
import { getJobStatusOperation } from '../../queries/getJobStatus.js';
import { listBackgroundJobsOperation } from '../../queries/listBackgroundJobs.js';
import type { ReadHistoryOutput } from '../../queries/readHistory.js';
import { fields, table } from '../cli/format.js';
import { printResult } from '../cli/output.js';
import { progressLine } from '../cli/progress.js';
import type { Config } from '../config.js';
import { streamId } from '../domain/events.js';
import { isTerminal, JobStatusSchema } from '../domain/jobs.js';
import type { Embedder } from '../ports/embedder.js';
import { AppError } from '../errors.js';
import { readableRootsOf } from '../ingestion/readableRoots.js';
import { createWorkerChunker } from '../ingestion/workerChunker.js';
import { createJobRunner } from '../jobs/jobRunner.js';
import type { JobRunner } from '../ports/jobRunner.js';
import type { JobStatusResponse } from '../domain/jobResponses.js';
import { runConnectorSync } from '../jobs/runConnectorSync.js';
import { connectorSyncWiring } from './connectorSync.js';
import { mountSyncCli } from './syncCli.js';
import type { ListJobsResponseSchema } from '../../queries/listBackgroundJobs.js';
import type { LedgerModule, WithLedger } from '../module.js';
import { DEFAULT_PROJECT } from '../operations.js';

export interface JobsModuleOptions {
  /** Throws UnavailableError while the embedding service is down; by default the configured HTTP embedder is asked. */
  probeEmbedder?: () => Promise<void>;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

/** An HTTP embedding server can go away and come back; an in-process model cannot. */
const httpProbe = ({ embeddings }: Config): (() => Promise<void>) | undefined => {
  if (embeddings.provider !== 'http' || !embeddings.url) return undefined;
  let probe: Promise<Embedder> | undefined;
  return async () => {
    probe ??= createHttpEmbedder({
      url: embeddings.url!,
      model: embeddings.model,
      api: embeddings.api,
      apiKey: embeddings.apiKey,
      dimensions: embeddings.dimensions ?? 1,
      timeoutMs: 5_000,
    });
    await (await probe).embed(['ping'], 'query');
  };
};

const bar = (percentage: number, width = 30) => {
  const filled = Math.round((percentage / 100) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percentage).padStart(3)}%`;
};

/** `database_name` names the project's workspace for the job tools; the CLI has no use for it. */
const withoutDatabaseName = <T extends object>(response: T): Omit<T, 'database_name'> => {
  const { database_name: _name, ...rest } = response as T & { database_name?: string };
  return rest;
};

const statusText = (status: JobStatusResponse): string => {
  const { job_id, status: state, progress_percentage, progress_message, project_id, ...rest } = withoutDatabaseName(status);
  return fields({ job: job_id, status: state, progress: `${progress_percentage}% ${progress_message}`, project: project_id, ...rest });
};

type ListJobsResponse = z.infer<typeof ListJobsResponseSchema>;

const jobsTable = (page: ListJobsResponse): string => {
  const shown = table(
    [
      { header: 'job', value: (j) => j.job_id },
      { header: 'status', value: (j) => j.status },
      { header: 'progress', value: (j) => `${j.progress_percentage}%` },
      { header: 'files', value: (j) => j.files_indexed },
      { header: 'chunks', value: (j) => j.chunks_created },
      { header: 'created', value: (j) => j.created_at },
      { header: 'repository', value: (j) => j.repo_path },
    ],
    page.jobs,
    'No jobs.',
  );
  const more = page.offset + page.jobs.length < page.total_count;
  return more ? `${shown}\n${page.jobs.length} of ${page.total_count}; more: --offset ${page.offset + page.jobs.length}` : shown;
};

const jobEvent = (event: ReadHistoryOutput['events'][number]) => {
  const { jobId: _id, ...data } = event.data;
  return { revision: Number(event.revision), type: event.type, occurredAt: event.occurredAt, data };
};

/** `jobs` takes `--json` too, and takes it wherever it stands: `ctx jobs show ID --json` sets the parent's. */
const wantsJson = (command: Command) => Boolean(command.optsWithGlobals<{ json?: boolean }>().json);

const mountCli = (runtime: { runner?: JobRunner }) => (program: Command, withLedger: WithLedger) => {
  program
    .command('index')
    .description('index a repository as a background job; --follow runs it here with a live progress bar')
    .argument('<path>', 'the repository folder')
    .option('-p, --project <project>', 'project workspace', DEFAULT_PROJECT)
    .option('-f, --follow', 'run the job in this process and show its progress until it ends')
    .option('--force', 're-ingest every file, even unchanged ones')
    .option('--include <globs...>', 'only these files')
    .option('--exclude <globs...>', 'leave these files out')
    .option('--json', 'print JSON')
    .action(async (repo: string, options: Record<string, unknown>, command: Command) => {
      const json = options.json as boolean | undefined;
      await withLedger(command, async (ledger) => {
        const started = await ledger.run<{ job_id: string; status: string; project_id: string }>('start_indexing_background', {
          repo_path: path.resolve(repo),
          project_id: options.project,
          force_reindex: Boolean(options.force),
          ...(options.include ? { include_patterns: options.include } : {}),
          ...(options.exclude ? { exclude_patterns: options.exclude } : {}),
        });
        if (!options.follow) {
          printResult(withoutDatabaseName(started), json, (job) =>
            `Started job ${job.job_id} (${job.status}) in project ${job.project_id}.\n` +
            `It runs while \`ctx serve\` runs (\`ctx index --follow\` runs it here); \`ctx jobs show ${job.job_id}\` shows its progress.`,
          );
          return;
        }
        // In this process, this process is the runner: start it, so queued and interrupted jobs run here too.
        // Through a server, the server runs the job and this follows its status.
        if (!ledger.server) await runtime.runner?.start();
        const line = progressLine();
        for (;;) {
          const status = await ledger.run<JobStatusResponse>('get_job_status', { job_id: started.job_id });
          line.update(`${bar(status.progress_percentage)} ${status.status}: ${status.progress_message}`);
          if (isTerminal(status.status)) {
            line.done();
            printResult(status, json, statusText);
            if (status.status !== 'completed') process.exitCode = 1;
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      });
    });

  const jobs = program
    .command('jobs')
    .description('background indexing jobs: list, show, cancel, history')
    .addOption(new Option('-s, --status <status>', 'only jobs in this status').choices(JobStatusSchema.options))
    .option('-p, --project <project>', 'project workspace', DEFAULT_PROJECT)
    .option('--limit <n>', 'jobs per page', (v) => Number(v), 50)
    .option('--offset <n>', 'skip this many', (v) => Number(v), 0)
    .option('--json', 'print JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const page = await withLedger(command, async (ledger) => {
        await ledger.catchUp('jobs');
        return ledger.run<ListJobsResponse>('list_background_jobs', {
          status: options.status,
          project_id: options.project,
          limit: options.limit,
          offset: options.offset,
        });
      });
      printResult(page, options.json as boolean | undefined, jobsTable);
    });
  jobs
    .command('show')
    .description('the status of one job')
    .argument('<jobId>')
    .option('--as-of <position|iso>', 'the status as it was then')
    .option('--json', 'print JSON')
    .action(async (jobId: string, options: { asOf?: string }, command: Command) => {
      const status = await withLedger(command, async (ledger) => {
        await ledger.catchUp('jobs');
        return ledger.run<JobStatusResponse>('get_job_status', { job_id: jobId, as_of: options.asOf });
      });
      printResult(withoutDatabaseName(status), wantsJson(command), () => statusText(status));
    });
  jobs
    .command('cancel')
    .description('cancel a pending job, or ask a running one to stop')
    .argument('<jobId>')
    .option('--json', 'print JSON')
    .action(async (jobId: string, _options: object, command: Command) => {
      const cancelled = await withLedger(command, (ledger) =>
        ledger.run<{ job_id: string; status: string; message: string }>('cancel_job', { job_id: jobId }),
      );
      printResult(cancelled, wantsJson(command), (c) => `${c.job_id}: ${c.status}. ${c.message}`);
    });
  jobs
    .command('history')
    .description('every event of a job, with its time')
    .argument('<jobId>')
    .option('--json', 'print JSON')
    .action(async (jobId: string, _options: object, command: Command) => {
      const events = await withLedger(command, async (ledger) => {
        const all: ReadHistoryOutput['events'] = [];
        let cursor: string | undefined;
        do {
          const page = await ledger.run<ReadHistoryOutput>('ledger.history', {
            stream: streamId('job', jobId),
            limit: 500,
            ...(cursor ? { cursor } : {}),
          });
          all.push(...page.events);
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        return all;
      });
      if (events.length === 0) throw new AppError('not_found', 404, `Job not found: ${jobId}`);
      printResult({ events: events.map(jobEvent) }, wantsJson(command), ({ events: rows }) =>
        table(
          [
            { header: 'occurred', value: (e) => e.occurredAt },
            { header: 'rev', value: (e) => `#${e.revision}` },
            { header: 'type', value: (e) => e.type },
            { header: 'details', value: (e) => (Object.keys(e.data).length ? JSON.stringify(e.data) : '') },
          ],
          rows,
        ),
      );
    });
};

/** Background indexing jobs: the runner, the jobs read model, seed 004's MCP tools and the CLI verbs. */
export const createJobsModule = (options: JobsModuleOptions = {}): LedgerModule => {
  const runtime: { runner?: JobRunner } = {};
  return {
    name: 'jobs',
    setup: async (context) => {
      const { config, db, store, readModels, logger, content } = context;
      const semanticEnabled = config.embeddings.provider !== 'none';
      const probeEmbedder = options.probeEmbedder ?? httpProbe(config);
      const connectors = connectorSyncWiring(context.secrets, readModels);
      const chunker = createWorkerChunker();
      const ingest = { store, content, chunker };
      const waitForProjections = (position: Parameters<typeof context.waitForProjections>[0], timeoutMs?: number) =>
        context.waitForProjections(position, timeoutMs);
      const runner = createJobRunner({
        maxConcurrent: config.jobs.maxConcurrent,
        locks: context.replicaLocks,
        store,
        ingest,
        readModels,
        waitForProjections: (position, timeoutMs) => context.waitForProjections(position, timeoutMs),
        ...(semanticEnabled ? { embeddingCheckpoint: () => readLiveCheckpoint(db, 'semantic') } : {}),
        ...(probeEmbedder ? { probeEmbedder } : {}),
        logger,
        progressIntervalMs: config.jobs.progressIntervalMs,
        progressEveryFiles: config.jobs.progressEveryFiles,
        retryInitialMs: options.retryInitialMs ?? 1_000,
        retryMaxMs: options.retryMaxMs ?? 30_000,
        syncConnector: (job, control) =>
          runConnectorSync({ store, ingest, readModels, waitForProjections, openSource: connectors.openSource, logger }, job, control),
      });
      runtime.runner = runner;
      const reads = { store, readModels, liveOutage: (jobId: string) => runner.outageOf(jobId) };
      return {
        projections: [await postgresDocumentProjection(db, jobsProjection)],
        operations: [
          startIndexingOperation({ store, runner, readable: readableRootsOf(config) }),
          getJobStatusOperation(reads),
          listBackgroundJobsOperation(reads),
          cancelJobOperation({ ...reads, runner }),
          syncConnectorOperation({ store, runner, ...connectors }),
        ],
        start: () => runner.start(),
        close: async () => {
          await runner.close();
          await chunker.close();
        },
      };
    },
    cli: (program, withLedger) => {
      mountCli(runtime)(program, withLedger);
      mountSyncCli(runtime)(program, withLedger);
    },
  };
};

export const jobsModule = createJobsModule();

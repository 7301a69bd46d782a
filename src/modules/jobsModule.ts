import { embeddingActivity } from '../../infra/embeddings/embeddingActivity.js';
import { createHttpEmbedder } from '../../infra/embeddings/httpEmbedder.js';
import { readLiveCheckpoint } from '../../infra/postgres/checkpoints.js';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { cancelJobOperation, cancelJobSurfaces } from '../../commands/jobs/cancelJob.js';
import { retryJobOperation, retryJobSurfaces } from '../../commands/jobs/retryJob.js';
import { startIndexingOperation, startIndexingSurfaces } from '../../commands/jobs/startIndexing.js';
import { syncConnectorOperation, syncConnectorSurfaces } from '../../commands/jobs/syncConnector.js';
import { controlIndexOperation } from '../../commands/jobs/controlIndex.js';
import {
  forceReindexOperation,
  forceReindexSurfaces,
  startIndexingConnectorsOperation,
  startIndexingConnectorsSurfaces,
} from '../../commands/jobs/startIndexingConnectors.js';
import { stopIndexingOperation, stopIndexingSurfaces } from '../../commands/jobs/stopIndexing.js';
import { jobsProjection } from '../../projections/jobs/jobs.js';
import { getJobStatusOperation, getJobStatusSurfaces } from '../../queries/jobs/getJobStatus.js';
import { indexStatusOperation, indexStatusSurfaces } from '../../queries/jobs/indexStatus.js';
import { listAllJobsOperation, listAllJobsSurfaces } from '../../queries/jobs/listAllJobs.js';
import { listBackgroundJobsOperation, listBackgroundJobsSurfaces } from '../../queries/jobs/listBackgroundJobs.js';
import type { Config } from '../config.js';
import type { Embedder } from '../ports/embedder.js';
import { readableRootsOf } from '../ingestion/readableRoots.js';
import { createWorkerChunker } from '../ingestion/workerChunker.js';
import { createJobRunner } from '../jobs/jobRunner.js';
import { runConnectorSync } from '../jobs/runConnectorSync.js';
import { connectorSyncWiring } from './connectorSync.js';
import { indexJobsFromOperations } from './indexJobsFromOperations.js';
import type { JobsApi, LedgerModule } from '../module.js';
import { settle, WRITE_SETTLE_MS } from '../engine/settling.js';

export interface JobsModuleOptions {
  /** Throws UnavailableError while the embedding service is down; by default the configured HTTP embedder is asked. */
  probeEmbedder?: () => Promise<void>;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

/**
 * An HTTP embedding server can go away and come back; an in-process model cannot. The probe learns
 * the model's dimension as the semantic index does (configured, or asked of the server once it
 * answers), so a server that is back is never taken for one answering the wrong vectors.
 */
const httpProbe = ({ embeddings }: Config): (() => Promise<void>) | undefined => {
  if (embeddings.provider !== 'http' || !embeddings.url) return undefined;
  let probe: Embedder | undefined;
  return async () => {
    probe ??= await createHttpEmbedder({
      url: embeddings.url!,
      model: embeddings.model,
      api: embeddings.api,
      apiKey: embeddings.apiKey,
      ...(embeddings.dimensions ? { dimensions: embeddings.dimensions } : {}),
      timeoutMs: 5_000,
    });
    await probe.embed(['ping'], 'query');
  };
};

/**
 * Background indexing jobs: the runner, the jobs read model, the job tools' operations, index control
 * and the list of every tenant's jobs; their verbs are the operations' own.
 */
export const createJobsModule = (options: JobsModuleOptions = {}): LedgerModule => ({
  name: 'jobs',
    setup: async (context) => {
      const { config, db, store, readModels, logger, content } = context;
      const semanticEnabled = config.embeddings.provider !== 'none';
      const probeEmbedder = options.probeEmbedder ?? httpProbe(config);
      const connectors = connectorSyncWiring(context.secrets, readModels, config.connectors);
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
        // An indexing job ends once its chunks are embedded, the semantic index included.
        waitForProjections: (position, timeoutMs) => context.projections().waitFor(position, { all: true, timeoutMs }),
        ...(semanticEnabled ? { embeddingCheckpoint: () => readLiveCheckpoint(db, 'semantic') } : {}),
        ...(probeEmbedder ? { probeEmbedder } : {}),
        vectorsMade: () => embeddingActivity.vectorsMade,
        logger,
        progressIntervalMs: config.jobs.progressIntervalMs,
        progressEveryFiles: config.jobs.progressEveryFiles,
        retryInitialMs: options.retryInitialMs ?? 1_000,
        retryMaxMs: options.retryMaxMs ?? 30_000,
        syncConnector: (job, control) =>
          runConnectorSync({ store, ingest, readModels, waitForProjections, openSource: connectors.openSource, logger }, job, control),
      });
      const reads = { store, readModels, liveOutage: (jobId: string) => runner.outageOf(jobId) };
      const statusSettled = async () => {
        const head = await store.headPosition();
        await settle(context.projections().waitFor(head, { name: jobsProjection.name, timeoutMs: WRITE_SETTLE_MS }), head);
      };
      const readable = readableRootsOf(config);
      const own = {
        start: startIndexingOperation({ store, runner, statusSettled, readable }),
        status: getJobStatusOperation(reads),
        list: listBackgroundJobsOperation(reads),
        cancel: cancelJobOperation({ ...reads, runner }),
        sync: syncConnectorOperation({ store, runner, statusSettled, ...connectors }),
      };
      // Index control (`/api/v1/index/*`, context.index_control) starts and lists jobs through the operations above.
      const indexJobs = indexJobsFromOperations(() => jobs);
      const indexing = {
        readModels,
        readable,
        jobs: indexJobs,
        checkRemote: (type: string, settings: Record<string, unknown>) => void connectors.openSource(type, settings),
      };
      const index = {
        start: startIndexingConnectorsOperation(indexing),
        forceReindex: forceReindexOperation(indexing),
        stop: stopIndexingOperation(indexJobs),
        status: indexStatusOperation(indexJobs),
      };
      const jobs: JobsApi = { ...own, indexStatus: index.status };
      return {
        projections: [await postgresDocumentProjection(db, jobsProjection)],
        operations: [
          ...Object.values(own),
          ...Object.values(index),
          controlIndexOperation(index),
          listAllJobsOperation({ readModels, store }),
          retryJobOperation({ store, runner, statusSettled, readable }),
        ],
        api: { jobs },
        start: () => runner.start(),
        close: async () => {
          await runner.close();
          await chunker.close();
        },
      };
    },
  surfaces: [
    startIndexingSurfaces,
    listBackgroundJobsSurfaces,
    getJobStatusSurfaces,
    cancelJobSurfaces,
    syncConnectorSurfaces,
    startIndexingConnectorsSurfaces,
    stopIndexingSurfaces,
    indexStatusSurfaces,
    forceReindexSurfaces,
    listAllJobsSurfaces,
    retryJobSurfaces,
  ],
});

export const jobsModule = createJobsModule();

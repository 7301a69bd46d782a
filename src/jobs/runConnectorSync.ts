import { ingestDocument, type IngestDeps } from '../../commands/search/ingestDocument.js';
import { documentIdOf } from '../domain/documents.js';
import { removeDocument } from '../../commands/search/removeDocument.js';
import { connectorOfSyncJob, connectorSyncDecider, recordSyncStep, type SyncStep } from '../../commands/jobs/syncConnector.js';
import type { DocumentView } from '../domain/documentView.js';
import { streamId } from '../domain/events.js';
import { findUnstorableText, toStorableText } from '../domain/text.js';
import type { JobPhase } from '../domain/jobs.js';
import type { Position } from '../domain/position.js';
import { loadAggregateAsOf } from '../engine/asOf.js';
import { commandContext, type CommandContext } from '../engine/commands.js';
import { AppError, ConcurrencyError, NotFoundError, ValidationError, type ErrorCode } from '../errors.js';
import type { EventStore } from '../ports/eventStore.js';
import type { Logger } from '../ports/logger.js';
import type { ReadModels } from '../ports/projections.js';
import type { RemoteSource, SyncCursor } from '../ports/remoteSource.js';
import type { JobStream } from './jobStream.js';
import type { RunControl } from './runIndexingJob.js';
import { untilStopped } from './untilStopped.js';

export interface ConnectorSyncDeps {
  store: EventStore;
  ingest: IngestDeps;
  readModels: ReadModels;
  waitForProjections(position: Position, timeoutMs?: number): Promise<void>;
  /** The remote source of a connector from its stored (sealed) settings; null for kinds that are not remote. */
  openSource(kind: string, settings: Record<string, unknown>): RemoteSource | null;
  logger: Logger;
}

/** How often a sync waiting on its remote service looks whether it was asked to stop. */

class Stop extends Error {
  constructor(readonly reason: 'cancelled' | 'stopping') {
    super(reason);
  }
}

const tally = (changed: number, repaired: number, failed: number) =>
  [`${changed} changed`, ...(repaired ? [`${repaired} with text repaired`] : []), ...(failed ? [`${failed} refused, see the server log`] : [])].join(', ');

/** The documents of a connector share one source, named after its kind and name (`github:Main Repository`). */
export const sourceOfConnector = (kind: string, name: string) => `${kind}:${name}`;

/** A failed sync names the service's failures as the job's error type in the words its status has always used. */
const SYNC_ERROR_TYPES: Partial<Record<ErrorCode, string>> = {
  CONNECTOR_ACCESS_DENIED: 'connector_access_denied',
  CONNECTOR_ERROR: 'connector_error',
};

/**
 * Runs one claimed sync job: fetches what changed since the connector's cursor, ingests each item
 * (an unchanged one appends nothing), saves the cursor in the connector's stream after each page,
 * and removes the documents whose items no longer exist upstream. A cancel stops it between items:
 * what was written stays, and the next sync resumes from the last saved cursor.
 */
export const runConnectorSync = async (deps: ConnectorSyncDeps, job: JobStream, control: RunControl): Promise<void> => {
  const jobId = job.jobId;
  const connectorId = connectorOfSyncJob(job.state.repoPath)!;
  const project = job.state.project!;
  const actor = { subject: `job-runner:${control.runnerId}`, tenant: null, via: 'job' as const };
  const contextNow = (): CommandContext => commandContext(actor, { project, correlationId: jobId });
  const counts = { filesScanned: 0, filesIndexed: 0, chunksCreated: 0 };
  let recordingOutcome = false;

  const checkStop = () => {
    if (control.stopping()) throw new Stop('stopping');
    if (!recordingOutcome && (control.cancelRequested() || job.state.cancelRequested)) throw new Stop('cancelled');
  };
  const append = async (transition: Parameters<JobStream['apply']>[0]) => {
    try {
      await job.apply(transition, contextNow());
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      // A cancel was recorded meanwhile: the caller's checks see it after the reload.
      await job.reload();
      if (job.state.cancelRequested && transition.type !== 'IndexingJobCancelled') throw new Stop('cancelled');
      await job.apply(transition, contextNow());
    }
  };
  /** A remote service can keep a request waiting (a slow page, a rate limit's long retry-after): a stop does not wait for it. */
  const unlessStopped = <T>(work: Promise<T>) => untilStopped(work, checkStop);
  const progress = (phase: JobPhase, percentage: number, message: string) =>
    append({ type: 'IndexingJobProgressed', data: { phase, percentage: Math.round(percentage), message, ...counts } });
  const cancelRecorded = async () => {
    await job.reload().catch(() => undefined);
    return job.state.cancelRequested;
  };
  type Step = SyncStep extends infer S ? (S extends SyncStep ? Omit<S, 'connectorId' | 'jobId'> : never) : never;
  const step = (s: Step) =>
    recordSyncStep(deps.store, { ...s, connectorId, jobId }, contextNow());

  try {
    const { state } = await loadAggregateAsOf(deps.store, streamId('connector', connectorId), connectorSyncDecider);
    if (!state.exists || state.removed) throw new NotFoundError(`No connector with id ${connectorId}`);
    const remote = deps.openSource(state.kind, state.settings);
    if (!remote) throw new ValidationError(`Connector '${state.name}' is not a remote service`);
    const source = sourceOfConnector(state.kind, state.name);
    let cursor: SyncCursor | null = state.cursor;
    let changed = 0;
    let removed = 0;
    let pages = 0;
    let repaired = 0;
    let failed = 0;
    const remove = async (sourceId: string, reason: string) => {
      try {
        if ((await removeDocument(deps.store, { documentId: documentIdOf(project, source, sourceId), reason }, contextNow())).removed)
          removed++;
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    };

    checkStop();
    await progress('scanning', 0, cursor ? `Fetching ${state.kind} changes since the last sync` : `Fetching everything from ${state.kind}`);
    const pagesOf = remote.changes(cursor)[Symbol.asyncIterator]();
    for (let next = await unlessStopped(pagesOf.next()); !next.done; next = await unlessStopped(pagesOf.next())) {
      const page = next.value;
      for (const upstream of page.items) {
        checkStop();
        counts.filesScanned++;
        // Text the ledger cannot store (a NUL, an unpaired surrogate) is repaired, as for files, and the document says so.
        const damaged = findUnstorableText(upstream) !== null;
        const item = damaged ? toStorableText(upstream) : upstream;
        if (damaged) {
          repaired++;
          deps.logger.warn({ jobId, connectorId, sourceId: item.sourceId }, 'connector item text repaired (NUL or unpaired surrogate replaced by U+FFFD)');
        }
        let result: Awaited<ReturnType<typeof ingestDocument>>;
        try {
          result = await ingestDocument(
            deps.ingest,
            {
              source,
              sourceId: item.sourceId,
              body: item.body,
              title: item.title,
              author: item.author,
              sourceUrl: item.sourceUrl,
              createdAt: item.createdAt,
              updatedAt: item.updatedAt,
              ...(item.contentType ? { contentType: item.contentType } : {}),
              tags: [state.kind],
              metadata: { ...item.metadata, ...(damaged ? { text_repaired: true } : {}), source_type: state.kind, connector_id: connectorId },
            },
            contextNow(),
          );
        } catch (error) {
          // One item the ledger refuses does not stop the others; it is counted and logged, and comes again when it changes upstream.
          if (!(error instanceof ValidationError)) throw error;
          failed++;
          deps.logger.warn({ jobId, connectorId, sourceId: item.sourceId, err: error }, 'connector item skipped');
          continue;
        }
        counts.filesIndexed++;
        if (result.outcome !== 'unchanged') {
          changed++;
          counts.chunksCreated += result.chunks;
        }
      }
      for (const sourceId of page.deleted) {
        checkStop();
        await remove(toStorableText(sourceId), `deleted in ${state.kind}`);
      }
      checkStop();
      await step({ kind: 'checkpoint', cursor: page.cursor });
      cursor = page.cursor;
      pages++;
      await progress('chunking', 10 + 70 * (1 - 1 / (1 + pages)), `Synced ${counts.filesScanned} items (${tally(changed, repaired, failed)})`);
    }

    checkStop();
    // Ids as their documents were stored: repaired like the items.
    const upstreamIds = await unlessStopped(remote.liveIds());
    const live = upstreamIds && new Set([...upstreamIds].map(toStorableText));
    if (live) {
      await progress('writing', 85, 'Looking for items deleted upstream');
      await deps.waitForProjections(await deps.store.headPosition(), 60_000);
      const { items } = await deps.readModels.find<DocumentView>('documents', { where: { source, project }, limit: 1_000_000 });
      for (const doc of items.filter((d) => !live.has(d.sourceId))) {
        checkStop();
        await remove(doc.sourceId, `deleted in ${state.kind}`);
      }
    }
    recordingOutcome = true;
    await step({
      kind: 'complete',
      cursor: cursor ?? {},
      itemsSeen: counts.filesScanned,
      documentsChanged: changed,
      documentsRemoved: removed,
    });
    await append({ type: 'IndexingJobCompleted', data: { ...counts, filesSkipped: 0, filesFailed: failed, filesRemoved: removed } });
  } catch (error) {
    recordingOutcome = true;
    // A sync that fails once a cancel is asked for ends cancelled: the caller stopped it, whatever it met on the way.
    if (!(error instanceof Stop) && !control.stopping() && (control.cancelRequested() || (await cancelRecorded()))) {
      await append({ type: 'IndexingJobCancelled', data: {} });
      return;
    }
    if (error instanceof Stop) {
      if (error.reason === 'cancelled') await append({ type: 'IndexingJobCancelled', data: {} });
      return;
    }
    const known = error instanceof AppError;
    if (!known) deps.logger.error({ jobId, err: error }, 'connector sync failed');
    const code = known ? (SYNC_ERROR_TYPES[error.code] ?? error.code) : 'connector_error';
    const message = known ? error.message : `The sync failed unexpectedly (job ${jobId}; see the server log)`;
    await step({ kind: 'fail', code, message }).catch((e: unknown) => deps.logger.error({ jobId, err: e }, 'could not record the failure'));
    await append({ type: 'IndexingJobFailed', data: { errorType: code, errorMessage: message } }).catch((e: unknown) =>
      deps.logger.error({ jobId, err: e }, 'could not record the failure'),
    );
  }
};

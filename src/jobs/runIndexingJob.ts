import { createHash } from 'node:crypto';
import { scanFilesystem, type ScannedFile, type SkippedFile } from '../../infra/connectors/index.js';
import type { IngestDeps } from '../../commands/search/ingestDocument.js';
import { jobsProjection } from '../../projections/jobs/jobs.js';
import { isTerminal, type JobPhase } from '../domain/jobs.js';
import { positionParts, type Position } from '../domain/position.js';
import { commandContext, type CommandContext } from '../engine/commands.js';
import { ConcurrencyError, UnavailableError } from '../errors.js';
import type { EventStore } from '../ports/eventStore.js';
import type { Logger } from '../ports/logger.js';
import type { ReadModels } from '../ports/projections.js';
import { ingestFiles } from '../ingestion/ingestFiles.js';
import { backoff, pause } from './backoff.js';
import type { JobStream } from './jobStream.js';
import { elapsedMs, progressThrottle } from './progressThrottle.js';
import { withoutPaths } from './withoutPaths.js';
import { untilStopped } from './untilStopped.js';

export interface IndexingDeps {
  store: EventStore;
  ingest: IngestDeps;
  readModels: ReadModels;
  waitForProjections(position: Position, timeoutMs?: number): Promise<void>;
  /** Checkpoint of the semantic index; absent when semantic search is disabled. */
  embeddingCheckpoint?: () => Promise<Position>;
  /** Throws UnavailableError while the embedding service is down. */
  probeEmbedder?: () => Promise<void>;
  /** Vectors this process's embedders have made so far, advanced per call to the model: embedding progress chunk by chunk. */
  vectorsMade?: () => number;
  logger: Logger;
  progressIntervalMs: number;
  progressEveryFiles: number;
  retryInitialMs: number;
  retryMaxMs: number;
}

export interface RunControl {
  runnerId: string;
  /** True once a cancel was asked for, here or (seen on reload) by another writer. */
  cancelRequested(): boolean;
  /** True when this process is shutting down: stop without writing an outcome; a restart resumes. */
  stopping(): boolean;
  /** Told why the job waits when an outage begins, and undefined when it ends. */
  waiting(reason: string | undefined): void;
}

/** A transient outage the job met: recorded as IndexingJobBlocked as soon as the ledger takes the write. */
interface Outage {
  reason: string;
  /** When the outage was first met: the blocked event is stamped with it, however late it is written. */
  blocked: CommandContext;
  unblocked?: CommandContext;
  recorded: boolean;
}

/** The job stopped without an outcome of its own: cancelled, handed over, or the runner is closing. */
class Stop extends Error {
  constructor(readonly reason: 'cancelled' | 'lost' | 'stopping') {
    super(reason);
  }
}

/** How often a wait that a cancel may cut short looks whether one was asked for. */

/**
 * Embedding rates are measured between two calls to the model returning, at least this far apart
 * when there are calls that far back: vectors come a call (up to 128 of them) at a time.
 */
const RATE_WINDOW_MS = 30_000;

/**
 * How long no vector may be made before the embedder is probed: a call of a large batch takes
 * seconds, and a probe queued behind the rest of the batch's calls would hold the job's progress.
 */
const EMBEDDER_QUIET_MS = 10_000;

/**
 * How far the embedding of a job's chunks has come: the vectors made since the job began (as each
 * call to the model returns), or what the semantic index has committed when that says more. Never
 * goes back, and stays below 100 % until the index has committed everything. Its time left is the
 * chunks left at the recent rate (see RATE_WINDOW_MS): unknown until two calls have returned.
 */
export const embeddingMeter = (vectorsMade: (() => number) | undefined, now: () => number = elapsedMs) => {
  const start = vectorsMade?.() ?? 0;
  const startedAt = now();
  /** When the count grew, oldest first: the time before the first is not embedding time (no call may have begun). */
  const steps: { at: number; made: number }[] = [];
  let made = start;
  let best = 0;
  /** Vectors a second at the recent rate; 0 until two calls have returned. */
  const perSecond = (): number => {
    const last = steps[steps.length - 1];
    const from = steps.findLast((step) => last && step.at <= last.at - RATE_WINDOW_MS) ?? steps[0];
    return last && from && last.at > from.at ? ((last.made - from.made) * 1000) / (last.at - from.at) : 0;
  };
  /** Seconds to embed `chunks` more at the recent rate; undefined until it is known. */
  const secondsFor = (chunks: number): number | undefined => {
    const rate = perSecond();
    return rate > 0 ? Math.round((Math.max(0, chunks) / rate) * 10) / 10 : undefined;
  };
  return {
    /** Records the count now; true while the embedder is at work (it made vectors within the quiet time). */
    sample(): boolean {
      made = vectorsMade?.() ?? start;
      if (made > (steps[steps.length - 1]?.made ?? start)) steps.push({ at: now(), made });
      // Once a later step than the first can be measured from, the first never is again.
      const last = steps[steps.length - 1];
      while (last && steps.length > 2 && steps[1]!.at <= last.at - RATE_WINDOW_MS) steps.shift();
      return now() - (last?.at ?? startedAt) < EMBEDDER_QUIET_MS;
    },
    /** Vectors made since it began, as last sampled. */
    made: () => made - start,
    perSecond,
    secondsFor,
    estimate(chunks: number, committed: number): { fraction: number; done: number; etaSeconds?: number } {
      const total = Math.max(1, chunks);
      const embedded = committed >= 1 ? 1 : Math.min(0.99, Math.max(committed, (made - start) / total));
      best = Math.max(best, embedded);
      const done = Math.min(chunks, Math.round(best * chunks));
      const etaSeconds = secondsFor(chunks - done);
      return { fraction: best, done, ...(etaSeconds === undefined ? {} : { etaSeconds }) };
    },
  };
};

/** Documents of one repository share one source, so a rescan can find the files that were removed. */
export const sourceOfRepo = (repoPath: string): string =>
  repoPath.length <= 190 ? `repo:${repoPath}` : `repo:${createHash('sha256').update(repoPath).digest('hex')}`;

/** Runs one claimed job through its phases to completed, failed or cancelled. */
export const runIndexingJob = async (deps: IndexingDeps, job: JobStream, control: RunControl): Promise<void> => {
  const { repoPath, include, exclude, forceReindex, project } = job.state;
  const jobId = job.jobId;
  const actor = { subject: `job-runner:${control.runnerId}`, tenant: null, via: 'job' as const };
  const contextNow = (): CommandContext => commandContext(actor, { project: project!, correlationId: jobId });
  const throttle = progressThrottle(deps.progressIntervalMs, deps.progressEveryFiles);
  const counts = { filesScanned: 0, filesIndexed: 0, chunksCreated: 0 };
  const startedAt = elapsedMs();
  const source = sourceOfRepo(repoPath);
  /** Whether the job's chunks are embedded before it ends: the semantic index embeds them as they are stored, from the first file on. */
  const embeds = deps.embeddingCheckpoint !== undefined;
  const embedding = embeddingMeter(deps.vectorsMade);

  // Once the job's outcome is being recorded, a cancel no longer interrupts the waits.
  let recordingOutcome = false;
  const checkStop = () => {
    if (control.stopping()) throw new Stop('stopping');
    if (recordingOutcome) return;
    if (control.cancelRequested() || job.state.cancelRequested) throw new Stop('cancelled');
  };

  /** Appends a step; on a conflict, reloads and lets the caller's checks see what changed. */
  const appendOnce = async (transition: Parameters<JobStream['apply']>[0], context: CommandContext) => {
    for (;;) {
      try {
        return await job.apply(transition, context);
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        await job.reload();
        if (job.state.runnerId !== control.runnerId || isTerminal(job.state.status)) throw new Stop('lost');
        if (job.state.cancelRequested && !recordingOutcome) throw new Stop('cancelled');
      }
    }
  };

  let outage: Outage | undefined;

  /**
   * Runs `work` until it stops throwing UnavailableError, with doubling delays. The outage is
   * recorded as IndexingJobBlocked before the next try, as soon as the ledger takes the write: at
   * once when only the embedder (or a read-model database apart from the event store) is down, and
   * when the database comes back when the event store lives in it. A retried step is harmless: each
   * job append is retried with the same command (the store answers a repeat with the first result),
   * and re-ingesting an unchanged file appends nothing.
   */
  const retrying = async <T>(work: () => Promise<T>): Promise<T> => {
    const delays = backoff(deps.retryInitialMs, deps.retryMaxMs);
    for (;;) {
      try {
        if (outage && !outage.recorded) {
          await appendOnce({ type: 'IndexingJobBlocked', data: { reason: outage.reason } }, outage.blocked);
          outage.recorded = true;
        }
        return await work();
      } catch (error) {
        if (!(error instanceof UnavailableError)) throw error;
        outage ??= { reason: `${withoutPaths(error.message)}; retrying with backoff`, blocked: contextNow(), recorded: false };
        control.waiting(outage.reason);
        const retryInMs = delays.next();
        deps.logger.warn({ jobId, reason: error.message, retryInMs }, 'indexing job blocked');
        await pause(retryInMs, checkStop);
      }
    }
  };

  /** The first step that succeeds after an outage puts the job back to running. */
  const endOutage = async () => {
    if (outage?.recorded) await appendOnce({ type: 'IndexingJobUnblocked', data: {} }, (outage.unblocked ??= contextNow()));
    if (outage) control.waiting(undefined);
    outage = undefined;
  };

  /** Runs a step that needs the database or the embedder, blocking the job while either is down. */
  const whileAvailable = async <T>(work: () => Promise<T>): Promise<T> => {
    const result = await retrying(work);
    await retrying(endOutage);
    return result;
  };

  /**
   * Appends a step of the job, through any outage: the job is running again before the step is
   * written, except for an outcome that ends a blocked job as it stands (cancelled, failed).
   */
  const append = (transition: Parameters<JobStream['apply']>[0]) => {
    const context = contextNow();
    const endsBlocked = transition.type === 'IndexingJobCancelled' || transition.type === 'IndexingJobFailed';
    return retrying(async () => {
      if (!endsBlocked) await endOutage();
      return appendOnce(transition, context);
    });
  };

  /**
   * `eta` in seconds when the phase measures its own. A job whose chunks are embedded gives no other:
   * embedding takes most of its time, at a pace the files chunked so far say nothing of. Otherwise
   * the time left is judged from the job's elapsed time.
   */
  const progress = async (phase: JobPhase, percentage: number, message: string, measuredEta?: number) => {
    const fraction = percentage / 100;
    const elapsed = (elapsedMs() - startedAt) / 1000;
    const eta = embeds ? measuredEta : fraction > 0.02 && fraction < 1 ? (elapsed / fraction) * (1 - fraction) : undefined;
    throttle.reported();
    await append({
      type: 'IndexingJobProgressed',
      data: {
        phase,
        percentage: Math.round(Math.min(100, Math.max(0, percentage))),
        message,
        ...counts,
        ...(eta === undefined ? {} : { estimatedSecondsRemaining: Math.round(eta * 10) / 10 }),
      },
    });
  };

  const scan = (): AsyncGenerator<ScannedFile | SkippedFile> =>
    scanFilesystem({
      roots: [repoPath],
      ...(include.length ? { include } : {}),
      ...(exclude.length ? { exclude } : {}),
    });

  const scanning = async (): Promise<number> => {
    // A job resumed after its cancel was recorded ends before it does anything.
    checkStop();
    await progress('scanning', 0, 'Scanning repository...');
    let total = 0;
    for await (const _file of scan()) {
      total++;
      checkStop();
    }
    counts.filesScanned = total;
    await progress('scanning', 10, `Found ${total.toLocaleString('en-US')} files`);
    return total;
  };

  /** A probe of an embedder busy with a long batch, or of a database busy with a long write, must not hold a cancel back. */
  const unlessStopped = <T>(work: () => Promise<T>) => (): Promise<T> => untilStopped(work(), checkStop);

  const embeddingSeq = async () =>
    deps.embeddingCheckpoint ? positionParts(await whileAvailable(deps.embeddingCheckpoint))[1] : 0n;
  /** A cheap read of the job's own read model: throws UnavailableError while its database is down. */
  const probeDatabase = () => deps.readModels.get(jobsProjection.name, jobId);
  const head = () => whileAvailable(() => deps.store.headPosition());

  /** Waits for the read models to apply everything up to `target`, probing the embedder and the database while it waits. */
  const waitForIndexes = async (target: Position, phase: JobPhase, from: number, to: number) => {
    const [, targetSeq] = positionParts(target);
    const startCheckpoint = await embeddingSeq();
    let lastCheckpoint = startCheckpoint;
    /** True once there; false while behind; throws UnavailableError while a read model cannot write (e.g. a full disk). */
    const reached = unlessStopped(() =>
      deps.waitForProjections(target, 500).then(
        () => true,
        (error: unknown) => {
          if (error instanceof UnavailableError) throw error;
          return false;
        },
      ),
    );
    for (;;) {
      checkStop();
      if (await whileAvailable(reached)) return;
      // not there yet: report, and find out whether the database or the embedder is the reason
      await whileAvailable(unlessStopped(probeDatabase));
      if (phase !== 'embedding' || !deps.embeddingCheckpoint) continue;
      const seq = await embeddingSeq();
      const working = embedding.sample();
      if (seq === lastCheckpoint && !working && deps.probeEmbedder) await whileAvailable(unlessStopped(deps.probeEmbedder));
      lastCheckpoint = seq;
      if (throttle.due()) {
        const span = Number(targetSeq - startCheckpoint) || 1;
        const committed = Math.min(1, Math.max(0, Number(seq - startCheckpoint) / span));
        const { fraction, done, etaSeconds } = embedding.estimate(counts.chunksCreated, committed);
        await progress(
          phase,
          from + (to - from) * fraction,
          `Generating embeddings: ${done.toLocaleString('en-US')}/${counts.chunksCreated.toLocaleString('en-US')} chunks`,
          etaSeconds,
        );
      }
    }
  };

  /**
   * While files are chunked: the longer of the files left at their pace so far and the chunks left
   * to embed (those counted, and as many again for the files left as the others had) at the
   * embedding rate; unknown until that rate is measured.
   */
  const timeLeftChunking = (scanned: number, total: number, since: number): number | undefined => {
    if (!embeds || scanned === 0) return undefined;
    embedding.sample();
    const expected = (counts.chunksCreated * Math.max(total, scanned)) / scanned;
    const embeddingLeft = embedding.secondsFor(expected - embedding.made());
    if (embeddingLeft === undefined) return undefined;
    const filesLeft = (((elapsedMs() - since) / 1000) * Math.max(0, total - scanned)) / scanned;
    return Math.max(filesLeft, embeddingLeft);
  };

  /** The files walked, chunked and stored; documents the tree no longer has are removed once the indexes hold the rest. */
  const indexing = async (total: number) => {
    const chunkingSince = elapsedMs();
    const tally = await ingestFiles(deps.ingest, scan(), {
      source,
      context: contextNow,
      ...(forceReindex ? { metadata: { reindexedBy: jobId } } : {}),
      attempt: whileAvailable,
      shouldStop: () => {
        checkStop();
        return false;
      },
      onProgress: async (t) => {
        // Files walked so far are the ones accounted for, should the tree have changed since the count.
        Object.assign(counts, { filesScanned: t.scanned, filesIndexed: t.created + t.updated + t.unchanged, chunksCreated: t.chunks });
        if (t.removed > 0) return;
        throttle.fileDone();
        if (throttle.due())
          await progress(
            'chunking',
            10 + (40 * t.scanned) / Math.max(1, total),
            `Chunking files: ${t.scanned}/${total}`,
            timeLeftChunking(t.scanned, total, chunkingSince),
          );
      },
      removeMissing: {
        readModels: deps.readModels,
        beforeRemoval: async () => {
          const timeLeft = timeLeftChunking(counts.filesScanned, counts.filesScanned, chunkingSince);
          await progress('chunking', 50, `Chunked ${counts.filesIndexed} files into ${counts.chunksCreated} chunks`, timeLeft);
          if (deps.embeddingCheckpoint) {
            await progress('embedding', 50, `Generating embeddings for ${counts.chunksCreated} chunks`, timeLeft);
            await waitForIndexes(await head(), 'embedding', 50, 90);
          }
          await progress('writing', 90, 'Writing to database...');
          await waitForIndexes(await head(), 'writing', 90, 100);
        },
      },
    });
    if (tally.failed > 0) deps.logger.warn({ jobId, failed: tally.failed, problems: tally.problems.slice(0, 20) }, 'files not indexed');
    return tally;
  };

  try {
    const total = await scanning();
    const tally = await indexing(total);
    if (tally.removed > 0) await waitForIndexes(await head(), 'writing', 90, 100);
    await append({
      type: 'IndexingJobCompleted',
      data: { ...counts, filesSkipped: tally.skipped, filesFailed: tally.failed, filesRemoved: tally.removed },
    });
  } catch (error) {
    recordingOutcome = true;
    if (error instanceof Stop) {
      if (error.reason === 'cancelled') await append({ type: 'IndexingJobCancelled', data: {} });
      return;
    }
    deps.logger.error({ jobId, err: error }, 'indexing job failed');
    await append({
      type: 'IndexingJobFailed',
      data: { errorType: (error as Error).name || 'Error', errorMessage: (error as Error).message },
    }).catch((appendError: unknown) => deps.logger.error({ jobId, err: appendError }, 'could not record the failure'));
  }
};

import type { StoredEvent } from '../domain/events.js';
import { START, type Position } from '../domain/position.js';
import { IllegalStateError, NotFoundError } from '../errors.js';
import type { EventStore, Subscription } from '../ports/eventStore.js';
import type { Logger } from '../ports/logger.js';
import { CheckpointMovedError, type ProjectionSink, type RunnableProjection } from '../ports/projections.js';

export interface RebuildProgress {
  processedEvents: number;
  /** Events of `$all` up to its head when the rebuild started; grows with what was appended since. */
  totalEvents: number;
  percent: number;
  /** From the rate observed so far; null until the first batch is in. */
  etaSeconds: number | null;
  checkpoint: Position;
  head: Position;
  startedAt: string;
}

export interface ProjectionStatus {
  name: string;
  version: number;
  state: 'running' | 'stopped' | 'rebuilding';
  checkpoint: Position;
  head: Position;
  lagEvents: number;
  lagSeconds: number;
  eventsPerSecond: number;
  lastError: { message: string; at: string } | null;
  rebuild: RebuildProgress | null;
}

export interface ProjectionRunner {
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): Promise<ProjectionStatus[]>;
  /** Fills a shadow copy from the first event while the live one serves queries, then swaps it in. */
  rebuild(name: string, onProgress?: (progress: RebuildProgress) => void): Promise<RebuildProgress>;
  /**
   * Starts a rebuild and returns once the projection shows as rebuilding: an unknown name
   * (NotFoundError) or a rebuild of it already running (IllegalStateError) throws here, at once.
   * The promise settles when the rebuild has swapped in, or failed.
   */
  startRebuild(name: string, onProgress?: (progress: RebuildProgress) => void): Promise<RebuildProgress>;
  /** Resolves once every projection (or the one named) has applied everything up to `position`. */
  waitFor(position: Position, options?: { name?: string; timeoutMs?: number }): Promise<void>;
}

export interface ProjectionRunnerOptions {
  batchSize?: number;
  logger: Logger;
}

/** Counting lag stops here: a status call must stay cheap however far behind a projection is. */
const LAG_COUNT_LIMIT = 100_000;

interface Live {
  projection: RunnableProjection;
  checkpoint: Position;
  subscription: Subscription | null;
  lastError: { message: string; at: string } | null;
  rate: { events: number; since: number; perSecond: number };
  rebuild: RebuildProgress | null;
  waiters: Set<() => void>;
}

/**
 * An embedded database answers without giving the event loop a turn: long loops over it let
 * requests in between pages, or a rebuild would hold every request until it ends.
 */
const letRequestsIn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Percent done and the time left at the rate observed since the rebuild started. */
const estimated = (progress: RebuildProgress): Pick<RebuildProgress, 'totalEvents' | 'percent' | 'etaSeconds'> => {
  const { processedEvents } = progress;
  const totalEvents = Math.max(progress.totalEvents, processedEvents);
  const seconds = (Date.now() - Date.parse(progress.startedAt)) / 1000;
  const perSecond = seconds > 0 ? processedEvents / seconds : 0;
  return {
    totalEvents,
    percent: totalEvents === 0 ? 0 : Math.floor((processedEvents / totalEvents) * 1000) / 10,
    etaSeconds: perSecond > 0 ? Math.ceil((totalEvents - processedEvents) / perSecond) : null,
  };
};

/**
 * Applies a batch, retrying what is left when another runner moved the checkpoint first.
 * Returns the new checkpoint.
 */
const applyBatch = async (sink: ProjectionSink, events: readonly StoredEvent[], from: Position): Promise<Position> => {
  let checkpoint = from;
  let pending = events.filter((e) => e.position > checkpoint);
  while (pending.length > 0) {
    const to = pending[pending.length - 1]!.position;
    try {
      await sink.apply(pending, checkpoint, to);
      return to;
    } catch (error) {
      if (!(error instanceof CheckpointMovedError)) throw error;
      checkpoint = await sink.checkpoint();
      pending = pending.filter((e) => e.position > checkpoint);
    }
  }
  return checkpoint;
};

export const createProjectionRunner = (
  store: EventStore,
  projections: readonly RunnableProjection[],
  { batchSize = 500, logger }: ProjectionRunnerOptions,
): ProjectionRunner => {
  const lives = new Map<string, Live>(
    projections.map((projection) => [
      projection.name,
      {
        projection,
        checkpoint: START,
        subscription: null,
        lastError: null,
        rate: { events: 0, since: Date.now(), perSecond: 0 },
        rebuild: null,
        waiters: new Set(),
      },
    ]),
  );

  const liveOf = (name: string): Live => {
    const live = lives.get(name);
    if (!live) throw new NotFoundError(`No projection named '${name}'`, { known: [...lives.keys()] });
    return live;
  };

  const recordRate = (live: Live, count: number) => {
    const now = Date.now();
    live.rate.events += count;
    const seconds = (now - live.rate.since) / 1000;
    if (seconds >= 1) {
      live.rate = { events: 0, since: now, perSecond: Math.round(live.rate.events / seconds) };
    }
  };

  const follow = async (live: Live) => {
    live.checkpoint = await live.projection.live.checkpoint();
    live.subscription = store.subscribe(
      async (events) => {
        try {
          live.checkpoint = await applyBatch(live.projection.live, events, live.checkpoint);
          live.lastError = null;
          recordRate(live, events.length);
          live.waiters.forEach((wake) => wake());
        } catch (error) {
          live.lastError = { message: (error as Error).message, at: new Date().toISOString() };
          logger.error(
            { projection: live.projection.name, error: (error as Error).message },
            'projection batch failed; retrying',
          );
          throw error;
        }
      },
      { from: live.checkpoint, batchSize },
    );
  };

  const stopFollowing = async (live: Live) => {
    await live.subscription?.stop();
    live.subscription = null;
  };

  const countAfter = async (from: Position, limit = LAG_COUNT_LIMIT): Promise<number> => {
    let count = 0;
    let cursor = from;
    while (count < limit) {
      const page = await store.readAll({ from: cursor, maxCount: 5_000 });
      if (page.length === 0) break;
      count += page.length;
      cursor = page[page.length - 1]!.position;
      await letRequestsIn();
    }
    return count;
  };

  /** Reads `$all` from the sink's checkpoint into it until nothing is left. */
  const catchUp = async (sink: ProjectionSink, progress: RebuildProgress, onProgress?: (p: RebuildProgress) => void) => {
    for (;;) {
      const events = await store.readAll({ from: progress.checkpoint, maxCount: batchSize });
      if (events.length === 0) return;
      progress.checkpoint = await applyBatch(sink, events, progress.checkpoint);
      progress.processedEvents += events.length;
      Object.assign(progress, estimated(progress));
      onProgress?.({ ...progress });
      await letRequestsIn();
    }
  };

  const fillAndSwap = async (live: Live, progress: RebuildProgress, onProgress?: (p: RebuildProgress) => void) => {
    const name = live.projection.name;
    progress.head = await store.headPosition();
    progress.totalEvents = await countAfter(START, Number.POSITIVE_INFINITY);
    const shadow = await live.projection.openShadow();
    try {
      await catchUp(shadow, progress, onProgress);
      // The live copy stops only for the last few events and the swap.
      const wasFollowing = live.subscription !== null;
      await stopFollowing(live);
      try {
        await catchUp(shadow, progress, onProgress);
        await shadow.promote();
      } finally {
        if (wasFollowing) await follow(live);
      }
      live.checkpoint = await live.projection.live.checkpoint();
      logger.info({ projection: name, events: progress.processedEvents }, 'projection rebuilt');
      return { ...progress, ...estimated(progress), percent: 100, etaSeconds: 0 };
    } catch (error) {
      await shadow.discard().catch(() => undefined);
      live.lastError = { message: `Rebuild failed: ${(error as Error).message}`, at: new Date().toISOString() };
      logger.error({ projection: name, error: (error as Error).message }, 'projection rebuild failed');
      throw error;
    }
  };

  const startRebuild = (name: string, onProgress?: (p: RebuildProgress) => void): Promise<RebuildProgress> => {
    const live = liveOf(name);
    if (live.rebuild) throw new IllegalStateError(`Projection '${name}' is already being rebuilt`, { projection: name });
    const progress: RebuildProgress = {
      processedEvents: 0,
      totalEvents: 0,
      percent: 0,
      etaSeconds: null,
      checkpoint: START,
      head: START,
      startedAt: new Date().toISOString(),
    };
    live.rebuild = progress;
    return fillAndSwap(live, progress, onProgress).finally(() => {
      live.rebuild = null;
    });
  };

  const rebuild = async (name: string, onProgress?: (p: RebuildProgress) => void) => startRebuild(name, onProgress);

  return {
    async start() {
      for (const live of lives.values()) {
        if (live.subscription) continue;
        const built = await live.projection.liveVersion();
        await follow(live);
        if (built !== null && built !== live.projection.version) {
          logger.info(
            { projection: live.projection.name, from: built, to: live.projection.version },
            'projection version changed; rebuilding beside the live copy',
          );
          rebuild(live.projection.name).catch((error: unknown) =>
            logger.error({ err: error, projection: live.projection.name }, 'automatic rebuild failed'),
          );
        }
      }
    },
    async stop() {
      await Promise.all([...lives.values()].map(stopFollowing));
      lives.forEach((live) => live.waiters.forEach((wake) => wake()));
    },
    async status() {
      const head = await store.headPosition();
      const [headEvent] = await store.readAll({ direction: 'backwards', maxCount: 1 });
      return Promise.all(
        [...lives.values()].map(async (live): Promise<ProjectionStatus> => {
          const checkpoint = await live.projection.live.checkpoint();
          const [next] = await store.readAll({ from: checkpoint, maxCount: 1 });
          const lagSeconds =
            next && headEvent ? (Date.parse(headEvent.recordedAt) - Date.parse(next.recordedAt)) / 1000 : 0;
          return {
            name: live.projection.name,
            version: live.projection.version,
            state: live.rebuild ? 'rebuilding' : live.subscription ? 'running' : 'stopped',
            checkpoint,
            head,
            lagEvents: next ? await countAfter(checkpoint) : 0,
            lagSeconds: Math.max(0, lagSeconds),
            eventsPerSecond: live.rate.perSecond,
            lastError: live.lastError,
            rebuild: live.rebuild ? { ...live.rebuild, ...estimated(live.rebuild) } : null,
          };
        }),
      );
    },
    rebuild,
    startRebuild,
    async waitFor(position, { name, timeoutMs = 10_000 } = {}) {
      const targets = name ? [liveOf(name)] : [...lives.values()];
      const deadline = Date.now() + timeoutMs;
      await Promise.all(
        targets.map(
          (live) =>
            new Promise<void>((resolve, reject) => {
              const check = () => {
                if (live.checkpoint >= position) return done(resolve);
                if (Date.now() >= deadline) {
                  return done(() =>
                    reject(new Error(`Projection '${live.projection.name}' did not reach ${position} in ${timeoutMs} ms`)),
                  );
                }
              };
              const timer = setTimeout(check, Math.max(0, deadline - Date.now()));
              function done(settle: () => void) {
                clearTimeout(timer);
                live.waiters.delete(check);
                settle();
              }
              live.waiters.add(check);
              check();
            }),
        ),
      );
    },
  };
};

import { z } from 'zod';
import type { StoredEvent } from '../domain/events.js';
import { START, type Position } from '../domain/position.js';
import { IllegalStateError, isLastingOutage, NotFoundError, UnavailableError } from '../errors.js';
import type { EventStore, Subscription } from '../ports/eventStore.js';
import type { Logger } from '../ports/logger.js';
import type { ProjectionSink, QuarantinedEvent, RunnableProjection, ShadowSink } from '../ports/projections.js';
import { soleReplica, type ReplicaLocks } from '../ports/replicaLocks.js';
import { inBackground } from '../ports/database.js';
import { applyBatch, type OnQuarantine } from './applyBatch.js';

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

/** A rebuild's progress as operations answer it. */
export const RebuildProgressSchema = z.object({
  processedEvents: z.number().int().nonnegative(),
  totalEvents: z.number().int().nonnegative(),
  percent: z.number().min(0).max(100),
  etaSeconds: z.number().nonnegative().nullable(),
  checkpoint: z.string(),
  head: z.string(),
  startedAt: z.string(),
});

export interface ProjectionStatus {
  name: string;
  /** The projection's version in this code. */
  version: number;
  /** The version that built the copy being served: below `version` until a rebuild swaps in; null before any. */
  builtVersion: number | null;
  state: 'running' | 'stopped' | 'rebuilding';
  checkpoint: Position;
  head: Position;
  lagEvents: number;
  lagSeconds: number;
  eventsPerSecond: number;
  lastError: { message: string; at: string } | null;
  rebuild: RebuildProgress | null;
  /** Events it skipped because it can never apply them, oldest first. */
  quarantined: QuarantinedEvent[];
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
  /**
   * Adds a projection that could not be made at start-up (the semantic index, once its model is
   * there); a started runner starts it at once, from its stored checkpoint.
   */
  add(projection: RunnableProjection): Promise<void>;
  /**
   * Resolves once the projections named have applied everything up to `position`; without names,
   * every projection but those that compute (the semantic index catches up on its own and reports
   * its lag). A name this deployment has no projection for is skipped (no embedder, no index).
   * Rejects at the timeout; with the projection's own UnavailableError when that is why it is behind:
   * at once when that outage lasts until someone acts (refused credentials), and as soon as a retry
   * fails too otherwise; with ProjectionFailingError once a retry fails too for a reason no adapter
   * names.
   */
  waitFor(position: Position, options?: WaitOptions): Promise<void>;
  /** How many events of `$all` up to `position` the projections named (as for waitFor) have yet to apply, the most of any. */
  behind(position: Position, names?: readonly string[]): Promise<{ name: string; events: number } | null>;
}

export interface WaitOptions {
  name?: string | readonly string[];
  /** Every projection, those that compute too: an indexing job ends once its chunks are embedded. */
  all?: true;
  timeoutMs?: number;
}

/** The error a wait rejects with when the bound passes: the events are stored, a read model has yet to apply them. */
export class ProjectionLagError extends Error {
  constructor(
    readonly projection: string,
    readonly position: Position,
    timeoutMs: number,
  ) {
    super(`Projection '${projection}' did not reach ${position} in ${timeoutMs} ms`);
  }
}

/**
 * The error a wait rejects with when a read model's batch fails again on its retry, for a reason
 * no adapter names: a fault, which retrying will not mend soon. The events are stored and retried
 * until applied; the log gives the reason, kept out of answers as any fault's is.
 */
export class ProjectionFailingError extends UnavailableError {
  override name = 'ProjectionFailingError';
  constructor(readonly projection: string, options: { cause: unknown }) {
    super(
      `The '${projection}' read model failed to apply events, and again on a retry (the log says why); it is retried until it succeeds`,
      options,
      'INTERNAL_ERROR',
    );
  }
}

export interface ProjectionRunnerOptions {
  batchSize?: number;
  /** A batch whose events' data is larger is applied in slices of about this size, each with its checkpoint. */
  maxBatchBytes?: number;
  logger: Logger;
  /** Replicas on one database run each projection in one of them at a time; the others read its checkpoint. */
  locks?: ReplicaLocks;
  /**
   * Whether a projection whose version changed is rebuilt by itself at start (the default). A
   * one-shot command says no: it would end before most rebuilds do, so it only says so.
   */
  rebuildsOnVersionChange?: boolean;
}

/** Counting lag stops here: a status call must stay cheap however far behind a projection is. */
const LAG_COUNT_LIMIT = 100_000;

interface Live {
  projection: RunnableProjection;
  handles: ReadonlySet<string>;
  /** Stored with the read model: every event up to here is in it. */
  checkpoint: Position;
  /** Every event up to here is applied or needs nothing (it is of a type the projection ignores). */
  seen: Position;
  storedAt: number;
  following: boolean;
  /** While set, the feed leaves this projection out; the feed restarts at its position when it ends. */
  retry: { failures: number; timer: NodeJS.Timeout | null };
  lastError: { message: string; at: string } | null;
  /** Why the last batch failed, while it keeps failing: a waiter is told when it is an outage. */
  lastFailure: unknown;
  rate: { events: number; since: number; perSecond: number };
  rebuild: RebuildProgress | null;
  waiters: Set<() => void>;
}

/** A projection whose events are all of other types stores its checkpoint at most this often. */
const STORE_IDLE_CHECKPOINT_MS = 1_000;
const MAX_RETRY_DELAY_MS = 5_000;
/** How often a replica tries to take over the projections another one runs, and sees whether it lost its own. */
const TAKEOVER_INTERVAL_MS = 1_000;
/** How often a wait on a projection another replica runs reads the shared checkpoint. */
const SHARED_POLL_MS = 100;

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

const lastPosition = (events: readonly StoredEvent[]): Position => events[events.length - 1]!.position;

/** Whether a projection follows `$all` on a feed of its own (see `writersFeed`). */
const ridesAlone = (live: Live) => live.projection.computes === true || live.projection.writesElsewhere === true;

/**
 * An embedded database writes on the thread that answers requests: a batch of a few hundred
 * ingested documents (thousands of chunks, each a row and an index entry) would hold it for
 * seconds. Slices of about this much event data keep each write short.
 */
const MAX_BATCH_BYTES = 64 * 1024;

/** The events in order, cut into slices of at most `maxBytes` of data each (or one event, when it is larger alone). */
const boundedSlices = (events: readonly StoredEvent[], maxBytes: number): StoredEvent[][] => {
  if (events.length === 0) return [[]];
  const slices: StoredEvent[][] = [[]];
  let bytes = 0;
  for (const event of events) {
    const size = JSON.stringify(event.data).length;
    if (bytes + size > maxBytes && slices[slices.length - 1]!.length > 0) {
      slices.push([]);
      bytes = 0;
    }
    slices[slices.length - 1]!.push(event);
    bytes += size;
  }
  return slices;
};

export const createProjectionRunner = (
  store: EventStore,
  projections: readonly RunnableProjection[],
  {
    batchSize = 500,
    maxBatchBytes = MAX_BATCH_BYTES,
    logger,
    locks = soleReplica,
    rebuildsOnVersionChange = true,
  }: ProjectionRunnerOptions,
): ProjectionRunner => {
  const lockOf = (live: Live) => `projection:${live.projection.name}`;
  const liveFor = (projection: RunnableProjection): Live => ({
    projection,
    handles: new Set(projection.eventTypes),
    checkpoint: START,
    seen: START,
    storedAt: 0,
    following: false,
    retry: { failures: 0, timer: null },
    lastError: null,
    lastFailure: undefined,
    rate: { events: 0, since: Date.now(), perSecond: 0 },
    rebuild: null,
    waiters: new Set(),
  });
  const lives = new Map<string, Live>(projections.map((projection) => [projection.name, liveFor(projection)]));
  let started = false;

  const targetsOf = (names: readonly string[] | undefined): Live[] =>
    names
      ? names.flatMap((name) => lives.get(name) ?? [])
      : [...lives.values()].filter((live) => !live.projection.computes);

  const liveOf = (name: string): Live => {
    const live = lives.get(name);
    if (!live) throw new NotFoundError(`No projection named '${name}'`, { known: [...lives.keys()] });
    return live;
  };

  const reportQuarantine =
    (name: string, copy: 'live' | 'rebuild'): OnQuarantine =>
    (event, error) =>
      logger.error(
        { projection: name, copy, position: event.position, eventType: event.type, streamId: event.streamId, error },
        'event quarantined: the projection cannot apply it and goes on past it',
      );

  const recordRate = (live: Live, count: number) => {
    const now = Date.now();
    live.rate.events += count;
    const seconds = (now - live.rate.since) / 1000;
    if (seconds >= 1) {
      live.rate = { events: 0, since: now, perSecond: Math.round(live.rate.events / seconds) };
    }
  };

  /**
   * Every following projection rides one subscription to `$all`, so each batch is read once
   * however many projections there are. The feed starts at the earliest of their positions; each
   * takes only the events after its own, of the types it handles. A projection whose batches take
   * long rides a feed of its own: one that computes (embeds each batch), or one that writes to
   * another server (Meilisearch). The others keep up meanwhile, so a job's status or a document's
   * keyword entry is not held behind a batch's embeddings, nor a document's view behind Meilisearch.
   */
  let writersFeed: Subscription | null = null;
  const ownFeeds = new Map<Live, Subscription>();
  let feedChanges = Promise.resolve();
  const riders = () => [...lives.values()].filter((live) => live.following && !live.retry.timer);

  /** A feed, with its reads and writes marked as background work (see `inBackground`). */
  const subscribeFor = (group: () => Live[], from: Position) =>
    inBackground(() =>
      store.subscribe(
        // Together: each projection's writes are independent, and on an embedded database one after
        // another they would spread a batch's cost over the commands that come in between.
        async (events) => {
          await Promise.all(group().map((live) => deliver(live, events)));
        },
        { from, batchSize },
      ),
    );

  /**
   * Stops the feeds `change` concerns (every one without `concerns`), makes it while they deliver
   * nothing, and starts them again where their riders need them. A change to one projection leaves
   * the feeds of the others running: a rebuild of the keyword index never waits for a batch the
   * semantic index is embedding.
   */
  const changeFeed = (change: () => void | Promise<void>, concerns?: readonly Live[]): Promise<void> => {
    const next = feedChanges.then(async () => {
      const touched = concerns ?? [...lives.values()];
      const alone = touched.filter(ridesAlone);
      const writersTouched = touched.some((live) => !ridesAlone(live));
      const stopping: Promise<void>[] = [];
      if (writersTouched && writersFeed) stopping.push(writersFeed.stop());
      if (writersTouched) writersFeed = null;
      for (const live of alone) {
        const feed = ownFeeds.get(live);
        if (feed) stopping.push(feed.stop());
        ownFeeds.delete(live);
      }
      await Promise.all(stopping);
      await change();
      const riding = riders();
      const writers = riding.filter((live) => !ridesAlone(live));
      if (writersTouched && writers.length > 0) {
        const from = writers.map((live) => live.seen).reduce((a, b) => (a < b ? a : b));
        writersFeed = subscribeFor(() => riders().filter((live) => !ridesAlone(live)), from);
      }
      for (const live of alone.filter((l) => riding.includes(l))) {
        ownFeeds.set(live, subscribeFor(() => (riders().includes(live) ? [live] : []), live.seen));
      }
    });
    feedChanges = next.catch(() => undefined);
    return next;
  };

  const retry = (live: Live) =>
    void changeFeed(() => {
      live.retry.timer = null;
    }, [live]);

  /** A projection waiting out its backoff is retried at once: a wait wants to know whether its outage goes on. */
  const retryNow = (live: Live) => {
    if (!live.retry.timer) return;
    clearTimeout(live.retry.timer);
    retry(live);
  };

  /** A failed batch is retried later; meanwhile the feed goes on without this projection. */
  const retryLater = (live: Live, error: unknown) => {
    // Stopping ends a batch in flight by closing what it waits on; its events are applied next start.
    if (!started) return;
    // `at` stays when the outage began, however many retries have failed since.
    live.lastError = { message: (error as Error).message, at: live.lastError?.at ?? new Date().toISOString() };
    live.lastFailure = error;
    logger.error({ projection: live.projection.name, error: (error as Error).message }, 'projection batch failed; retrying');
    const delay = Math.min(MAX_RETRY_DELAY_MS, 100 * 2 ** live.retry.failures++);
    // Waits learn of it at once, and of how many have failed: some end on it (see waitFor).
    live.waiters.forEach((wake) => wake());
    live.retry.timer = setTimeout(() => retry(live), delay);
  };

  const deliver = async (live: Live, events: readonly StoredEvent[]) => {
    const to = lastPosition(events);
    const fresh = events.filter((e) => e.position > live.seen);
    if (fresh.length === 0) return;
    const relevant = fresh.filter((e) => live.handles.has(e.type));
    try {
      // Events of other types need nothing; the checkpoint passes them in memory, and is stored now and then.
      if (relevant.length > 0 || Date.now() - live.storedAt >= STORE_IDLE_CHECKPOINT_MS) {
        const slices = live.projection.writesElsewhere ? [relevant] : boundedSlices(relevant, maxBatchBytes);
        for (const [i, slice] of slices.entries()) {
          // Each slice commits with its own checkpoint: the last one's reaches the end of the batch.
          const sliceTo = i === slices.length - 1 ? to : lastPosition(slice);
          live.checkpoint = await applyBatch(
            live.projection.live,
            slice,
            live.checkpoint,
            sliceTo,
            reportQuarantine(live.projection.name, 'live'),
          );
          live.storedAt = Date.now();
          if (i < slices.length - 1) {
            live.seen = live.checkpoint;
            // A wait for a position this slice reached ends now, not after the rest of the batch.
            live.waiters.forEach((wake) => wake());
            await letRequestsIn();
          }
        }
      }
      live.seen = live.checkpoint > to ? live.checkpoint : to;
      live.lastError = null;
      live.lastFailure = undefined;
      live.retry.failures = 0;
      recordRate(live, fresh.length);
      live.waiters.forEach((wake) => wake());
    } catch (error) {
      retryLater(live, error);
    }
  };

  const follow = (live: Live) =>
    changeFeed(async () => {
      live.checkpoint = live.seen = await live.projection.live.checkpoint();
      live.following = true;
    }, [live]);

  const detach = (live: Live) => {
    live.following = false;
    if (live.retry.timer) clearTimeout(live.retry.timer);
    live.retry.timer = null;
  };

  const stopFollowing = (live: Live) => changeFeed(() => detach(live), [live]);

  const countAfter = (from: Position, limit = LAG_COUNT_LIMIT): Promise<number> => store.countAll({ from, limit });

  /** Reads `$all` from the sink's checkpoint into it until nothing is left. */
  const catchUp = async (
    name: string,
    sink: ProjectionSink,
    progress: RebuildProgress,
    onProgress?: (p: RebuildProgress) => void,
  ) => {
    for (;;) {
      const events = await store.readAll({ from: progress.checkpoint, maxCount: batchSize });
      if (events.length === 0) return;
      const to = lastPosition(events);
      progress.checkpoint = await applyBatch(sink, events, progress.checkpoint, to, reportQuarantine(name, 'rebuild'));
      progress.processedEvents += events.length;
      Object.assign(progress, estimated(progress));
      onProgress?.({ ...progress });
      await letRequestsIn();
    }
  };

  const fillAndSwap = async (live: Live, progress: RebuildProgress, onProgress?: (p: RebuildProgress) => void) => {
    const name = live.projection.name;
    let shadow: ShadowSink | null = null;
    try {
      progress.head = await store.headPosition();
      progress.totalEvents = await countAfter(START, Number.POSITIVE_INFINITY);
      shadow = await live.projection.openShadow();
      await catchUp(name, shadow, progress, onProgress);
      // The live copy stops only for the last few events and the swap.
      const wasFollowing = live.following;
      await stopFollowing(live);
      try {
        await catchUp(name, shadow, progress, onProgress);
        await shadow.promote();
      } finally {
        if (wasFollowing) await follow(live);
      }
      if (!wasFollowing) live.checkpoint = live.seen = await live.projection.live.checkpoint();
      logger.info({ projection: name, events: progress.processedEvents }, 'projection rebuilt');
      return { ...progress, ...estimated(progress), percent: 100, etaSeconds: 0 };
    } catch (error) {
      await shadow?.discard().catch(() => undefined);
      // Stopped with the ledger (a short command, say), not failed: the live copy serves on, and
      // the next start rebuilds again.
      if (!started) {
        logger.info({ projection: name, events: progress.processedEvents }, 'projection rebuild stopped with the ledger');
        throw error;
      }
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
    return inBackground(() => fillAndSwap(live, progress, onProgress)).finally(() => {
      live.rebuild = null;
    });
  };

  const rebuild = async (name: string, onProgress?: (p: RebuildProgress) => void) => startRebuild(name, onProgress);

  /**
   * Follows the projections whose replica let go of them (it died, or stopped), and stops following
   * those whose lock this one lost with its connection: another replica may be running them now.
   */
  let takeover: NodeJS.Timeout | null = null;
  let takingOver = false;
  const takeOver = async () => {
    if (takingOver || !started) return;
    takingOver = true;
    try {
      for (const live of lives.values()) {
        if (live.following && !locks.holds(lockOf(live))) await stopFollowing(live);
        else if (!live.following && !live.rebuild && started && (await locks.tryAcquire(lockOf(live)))) {
          logger.info({ projection: live.projection.name }, 'projection taken over from another replica');
          await follow(live);
        }
      }
    } catch (error) {
      logger.warn({ error: (error as Error).message }, 'could not take projections over; trying again');
    } finally {
      takingOver = false;
    }
  };

  /** Read-your-writes on a projection another replica runs: its stored checkpoint is past `position`, or nothing up to there concerns it. */
  const appliedShared = async (live: Live, position: Position): Promise<boolean> => {
    const checkpoint = await live.projection.live.checkpoint();
    if (checkpoint >= position) return true;
    const [next] = await store.readAll({ from: checkpoint, maxCount: 1, filter: { eventTypes: [...live.projection.eventTypes] } });
    return next === undefined || next.position > position;
  };

  /** Starts every projection not yet following; one whose version changed is rebuilt beside its live copy. */
  const startAll = async () => {
    started = true;
    const starting: Live[] = [];
    for (const live of lives.values()) {
      if (!live.following && !live.rebuild && (await locks.tryAcquire(lockOf(live)))) starting.push(live);
    }
    if (locks !== soleReplica) takeover ??= setInterval(() => void takeOver(), TAKEOVER_INTERVAL_MS);
    const built = await Promise.all(starting.map((live) => live.projection.liveVersion()));
    await changeFeed(async () => {
      for (const live of starting) {
        live.checkpoint = live.seen = await live.projection.live.checkpoint();
        live.following = true;
      }
    }, starting);
    starting.forEach((live, i) => {
      const version = built[i];
      if (version === null || version === undefined || version === live.projection.version) return;
      if (!rebuildsOnVersionChange) {
        logger.warn(
          { projection: live.projection.name, from: version, to: live.projection.version },
          `projection built by an older version, served as it is: a server rebuilds it by itself, or \`ctx projections rebuild ${live.projection.name}\` now`,
        );
        return;
      }
      logger.info(
        { projection: live.projection.name, from: version, to: live.projection.version },
        'projection version changed; rebuilding beside the live copy',
      );
      // A failure is logged, and shown as the projection's last error, where the rebuild ends.
      rebuild(live.projection.name).catch(() => undefined);
    });
  };

  return {
    start: startAll,
    async add(projection) {
      if (lives.has(projection.name)) throw new IllegalStateError(`Projection '${projection.name}' is already running`);
      lives.set(projection.name, liveFor(projection));
      if (started) await startAll();
    },
    async stop() {
      started = false;
      if (takeover) clearInterval(takeover);
      takeover = null;
      await changeFeed(() => lives.forEach(detach));
      await Promise.all([...lives.values()].map((live) => locks.release(lockOf(live))));
      lives.forEach((live) => live.waiters.forEach((wake) => wake()));
    },
    async status() {
      // The last event gives both the head position and the time lag is measured against.
      const [headEvent] = await store.readAll({ direction: 'backwards', maxCount: 1 });
      const head = headEvent?.position ?? START;
      return Promise.all(
        [...lives.values()].map(async (live): Promise<ProjectionStatus> => {
          const [stored, quarantined, builtVersion] = await Promise.all([
            live.projection.live.checkpoint(),
            live.projection.quarantined(),
            live.projection.liveVersion(),
          ]);
          const checkpoint = live.seen > stored ? live.seen : stored;
          const [next] = await store.readAll({ from: checkpoint, maxCount: 1 });
          const lagSeconds =
            next && headEvent ? (Date.parse(headEvent.recordedAt) - Date.parse(next.recordedAt)) / 1000 : 0;
          return {
            name: live.projection.name,
            version: live.projection.version,
            builtVersion,
            state: live.rebuild ? 'rebuilding' : live.following ? 'running' : 'stopped',
            checkpoint,
            head,
            lagEvents: next ? await countAfter(checkpoint) : 0,
            lagSeconds: Math.max(0, lagSeconds),
            eventsPerSecond: live.rate.perSecond,
            lastError: live.lastError,
            rebuild: live.rebuild ? { ...live.rebuild, ...estimated(live.rebuild) } : null,
            quarantined,
          };
        }),
      );
    },
    rebuild,
    startRebuild,
    async behind(position, names) {
      let most: { name: string; events: number } | null = null;
      for (const live of targetsOf(names)) {
        if (live.seen >= position) continue;
        // Behind only on events it applies: the others pass as soon as its feed reads them.
        const [next] = await store.readAll({ from: live.seen, maxCount: 1, filter: { eventTypes: [...live.projection.eventTypes] } });
        if (!next || next.position > position) continue;
        const events = await countAfter(live.seen);
        if (events > 0 && (!most || events > most.events)) most = { name: live.projection.name, events };
      }
      return most;
    },
    async waitFor(position, { name, all, timeoutMs = 10_000 } = {}) {
      const targets = all
        ? [...lives.values()]
        : targetsOf(name === undefined ? undefined : typeof name === 'string' ? [name] : name);
      const waits = Promise.all(
        targets.map(
          (live) =>
            new Promise<void>((resolve, reject) => {
              // A failure is believed once a retry has failed too: the wait then ends with it, and a
              // bulk load goes on storing, each batch told at once. Begun during one, a wait has the
              // projection retried now rather than at the end of its backoff.
              // Counted by the runner, not told apart by the error: an adapter may throw one object again.
              let failedBefore: number | undefined;
              const check = () => {
                if (live.seen >= position) return done(resolve);
                const failure = live.lastFailure;
                // Refused credentials, say: no retry within the wait will apply it.
                if (isLastingOutage(failure)) return done(() => reject(failure));
                if (failure === undefined) failedBefore = undefined;
                else if (failedBefore === undefined) failedBefore = live.retry.failures;
                else if (live.retry.failures > failedBefore) {
                  const reason =
                    failure instanceof UnavailableError
                      ? failure
                      : new ProjectionFailingError(live.projection.name, { cause: failure });
                  return done(() => reject(reason));
                }
                // Alone and not started, nothing will apply it: a wait would only run out its time.
                if (!started && locks === soleReplica) expire();
              };
              const expire = () => {
                // Behind because its writes fail for a reason that passes (a full disk, a lost database): say so.
                const outage = live.lastFailure instanceof UnavailableError ? live.lastFailure : undefined;
                done(() => reject(outage ?? new ProjectionLagError(live.projection.name, position, timeoutMs)));
              };
              // The timer alone says the time is up. Compared with the wall clock it may fire a
              // millisecond early (or seconds early, once the clock is set back): a wait that then
              // ended only on the projection's next batch held its caller for as long as that batch took.
              const timer = setTimeout(() => (live.seen >= position ? done(resolve) : expire()), timeoutMs);
              let probing = false;
              const shared = setInterval(() => {
                if (!started || live.following || probing) return;
                probing = true;
                appliedShared(live, position).then(
                  (applied) => {
                    probing = false;
                    if (applied) done(resolve);
                  },
                  () => {
                    probing = false;
                  },
                );
              }, SHARED_POLL_MS);
              function done(settle: () => void) {
                clearTimeout(timer);
                clearInterval(shared);
                live.waiters.delete(check);
                settle();
              }
              live.waiters.add(check);
              check();
              if (failedBefore !== undefined) retryNow(live);
            }),
        ),
      );
      // Whichever projection's wait ran out first, an outage behind any of them is the reason to give:
      // one merely applying its last events must not hide another that cannot write.
      await waits.catch((error: unknown) => {
        const outage = targets.find((live) => live.seen < position && live.lastFailure instanceof UnavailableError);
        throw outage ? outage.lastFailure : error;
      });
    },
  };
};

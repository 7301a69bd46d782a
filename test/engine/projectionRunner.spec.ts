import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPglite, type Database } from '../../infra/postgres/database.js';
import { postgresDocumentProjection, postgresReadModels } from '../../infra/postgres/documentReadModels.js';
import { createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import { streamSummaries, type StreamSummary } from '../../projections/ledger/streamSummaries.js';
import { createProjectionRunner, ProjectionFailingError, ProjectionLagError, type RebuildProgress } from '../../src/engine/projectionRunner.js';
import { CredentialsRefusedError, DatabaseUnavailableError, IllegalStateError, NotFoundError } from '../../src/errors.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { CheckpointMovedError, type DocumentProjection, type RunnableProjection } from '../../src/ports/projections.js';
import { silentLogger } from '../../src/ports/logger.js';
import { appendUnchecked, newEvents } from '../support/events.js';
import { until } from '../support/polling.js';

let db: Database;
let store: EventStore;

beforeAll(async () => {
  db = await openPglite();
  store = await createPostgresEventStore(db, { pollIntervalMs: 50 });
});
afterAll(async () => {
  await store.close();
  await db.close();
});

/** The same projection logic under another name, so each test owns its read model. */
const summariesAs = (name: string, version = 1): DocumentProjection<StreamSummary> => ({
  ...streamSummaries,
  name,
  version,
});

const fill = async (streams: number, eventsPerStream: number) => {
  const ids: string[] = [];
  for (let s = 0; s < streams; s++) {
    const id = `job-${crypto.randomUUID()}`;
    ids.push(id);
    await store.append(id, newEvents(eventsPerStream), 'no_stream');
  }
  return ids;
};

/** The read model `name` built from every event so far by its version 1, which then stops. */
const builtAtVersionOne = async (name: string) => {
  const v1 = await postgresDocumentProjection(db, summariesAs(name, 1));
  const runner = createProjectionRunner(store, [v1], { logger: silentLogger });
  await runner.start();
  await runner.waitFor(await store.headPosition());
  await runner.stop();
};

const snapshot = async (name: string) =>
  (await postgresReadModels(db).find<StreamSummary>(name, { orderBy: [{ field: 'streamId', direction: 'asc' }] }))
    .items;

/** `base`, its every batch held until `release` is called: busy, as with embeddings or another server's indexing. */
const heldUntilReleased = (base: RunnableProjection, traits: Pick<RunnableProjection, 'computes' | 'writesElsewhere'>) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const projection: RunnableProjection = {
    ...base,
    ...traits,
    live: { ...base.live, apply: async (events, from, to) => released.then(() => base.live.apply(events, from, to)) },
  };
  return { projection, release };
};

/**
 * `base`, its every batch failing with the error `failure` gives until `mend` is called;
 * `attempts` counts the batches tried.
 */
const failingWith = (base: RunnableProjection, failure: () => Error) => {
  let failing = true;
  let attempts = 0;
  const projection: RunnableProjection = {
    ...base,
    live: {
      ...base.live,
      apply: (events, from, to) => {
        attempts++;
        return failing ? Promise.reject(failure()) : base.live.apply(events, from, to);
      },
    },
  };
  return { projection, mend: () => (failing = false), attempts: () => attempts };
};

/** `base`, with the number of events of each batch it is given recorded in `applied`. */
const recordingBatches = (base: RunnableProjection, traits: Pick<RunnableProjection, 'writesElsewhere'> = {}) => {
  const applied: number[] = [];
  const projection: RunnableProjection = {
    ...base,
    ...traits,
    live: {
      ...base.live,
      apply: (events, from, to) => {
        applied.push(events.length);
        return base.live.apply(events, from, to);
      },
    },
  };
  return { projection, applied };
};

describe('projection runner', () => {
  it('replaying the same events twice gives the same read model', async () => {
    await fill(5, 3);
    const first = await postgresDocumentProjection(db, summariesAs('replay_a'));
    const second = await postgresDocumentProjection(db, summariesAs('replay_b'));
    const runner = createProjectionRunner(store, [first, second], { logger: silentLogger, batchSize: 4 });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();
    const a = await snapshot('replay_a');
    expect(a.length).toBeGreaterThanOrEqual(5);
    expect(await snapshot('replay_b')).toEqual(a);
  });

  it('follows new events live and lets a command wait for its own write', async () => {
    const projection = await postgresDocumentProjection(db, summariesAs('live_follow'));
    const runner = createProjectionRunner(store, [projection], { logger: silentLogger });
    await runner.start();
    const [stream] = await fill(1, 2);
    const { position } = await store.append(stream!, newEvents(1), 1n);
    await runner.waitFor(position);
    const summary = await postgresReadModels(db).get<StreamSummary>('live_follow', stream!);
    expect(summary).toMatchObject({ streamId: stream, events: 3, lastRevision: 2, lastPosition: position });
    const [status] = await runner.status();
    expect(status).toMatchObject({ name: 'live_follow', state: 'running', checkpoint: position, lagEvents: 0 });
    await runner.stop();
  });

  it('reads each batch once for every projection, and a failing one holds back neither the others nor its own retry', async () => {
    // A database out of reach is retried, never mistaken for an event that cannot be applied.
    const { projection: flaky, mend } = failingWith(
      await postgresDocumentProjection(db, summariesAs('flaky')),
      () => new DatabaseUnavailableError('read model unavailable'),
    );
    const healthy = await postgresDocumentProjection(db, summariesAs('healthy'));
    // Handles no event type that is appended here: it must still count as caught up.
    const idle = await postgresDocumentProjection(db, { ...summariesAs('idle'), eventTypes: ['ApiKeyRevoked'] });
    let subscriptions = 0;
    const counted: EventStore = {
      ...store,
      subscribe: (handler, options) => {
        subscriptions++;
        return store.subscribe(handler, options);
      },
    };
    const runner = createProjectionRunner(counted, [flaky, healthy, idle], { logger: silentLogger });
    await runner.start();
    expect(subscriptions).toBe(1);
    const [stream] = await fill(1, 3);
    const head = await store.headPosition();
    await runner.waitFor(head, { name: 'healthy' });
    await runner.waitFor(head, { name: 'idle' });
    expect(await postgresReadModels(db).get<StreamSummary>('healthy', stream!)).toMatchObject({ events: 3 });
    const flakyStatus = (await runner.status()).find((s) => s.name === 'flaky');
    expect(flakyStatus?.lastError?.message).toMatch(/read model unavailable/);
    expect((await runner.status()).find((s) => s.name === 'idle')).toMatchObject({ checkpoint: head, lagEvents: 0 });

    mend();
    await runner.waitFor(head, { name: 'flaky' });
    expect(await postgresReadModels(db).get<StreamSummary>('flaky', stream!)).toMatchObject({ events: 3 });
    expect((await runner.status()).find((s) => s.name === 'flaky')).toMatchObject({ lastError: null, quarantined: [] });
    await runner.stop();
  });

  it('keeps the others current while a projection that computes is busy with a batch', async () => {
    // Like the semantic index embedding a batch of chunks: its batch takes as long as the work it computes.
    const { projection: computing, release } = heldUntilReleased(
      await postgresDocumentProjection(db, summariesAs('embedding_like')),
      { computes: true },
    );
    const writer = await postgresDocumentProjection(db, summariesAs('writes_only'));
    const runner = createProjectionRunner(store, [computing, writer], { logger: silentLogger });
    await runner.start();
    const [stream] = await fill(1, 3);
    const head = await store.headPosition();
    await runner.waitFor(head, { name: 'writes_only' });
    expect(await postgresReadModels(db).get<StreamSummary>('writes_only', stream!)).toMatchObject({ events: 3 });
    expect(await postgresReadModels(db).get<StreamSummary>('embedding_like', stream!)).toBeNull();
    release();
    await runner.waitFor(head, { name: 'embedding_like' });
    expect(await postgresReadModels(db).get<StreamSummary>('embedding_like', stream!)).toMatchObject({ events: 3 });
    await runner.stop();
  });

  it('keeps the others current while a projection writing to another server is busy, which a write still waits for', async () => {
    // Like the Meilisearch keyword index while its server indexes a batch.
    const { projection: elsewhere, release } = heldUntilReleased(
      await postgresDocumentProjection(db, summariesAs('meili_like')),
      { writesElsewhere: true },
    );
    const writer = await postgresDocumentProjection(db, summariesAs('writes_here'));
    const runner = createProjectionRunner(store, [elsewhere, writer], { logger: silentLogger });
    await runner.start();
    const [first] = await fill(1, 3);
    await runner.waitFor(await store.headPosition(), { name: 'writes_here' });
    // Appended while the first batch is held: on a shared feed this batch would wait behind it.
    const [stream] = await fill(1, 3);
    const head = await store.headPosition();
    await runner.waitFor(head, { name: 'writes_here' });
    expect(await postgresReadModels(db).get<StreamSummary>('writes_here', stream!)).toMatchObject({ events: 3 });
    expect(await postgresReadModels(db).get<StreamSummary>('meili_like', first!)).toBeNull();
    // A wait on no projection in particular (an ingest's read-your-writes) is for it too.
    await expect(runner.waitFor(head, { timeoutMs: 300 })).rejects.toMatchObject({ projection: 'meili_like' });
    release();
    await runner.waitFor(head);
    expect(await postgresReadModels(db).get<StreamSummary>('meili_like', stream!)).toMatchObject({ events: 3 });
    await runner.stop();
  });

  it('a wait on every projection gives the outage behind one of them, even when another busy one runs out first', async () => {
    // Registered first, so its wait runs out first: behind, but only busy.
    const { projection: busy, release } = heldUntilReleased(
      await postgresDocumentProjection(db, summariesAs('busy_first')),
      { computes: true },
    );
    const { projection: cannotWrite, mend } = failingWith(
      await postgresDocumentProjection(db, summariesAs('cannot_write')),
      () => new DatabaseUnavailableError('index unavailable'),
    );
    const runner = createProjectionRunner(store, [busy, cannotWrite], { logger: silentLogger });
    await runner.start();
    await fill(1, 3);
    const head = await store.headPosition();
    await until(async () => (await runner.status()).find((s) => s.name === 'cannot_write')?.lastError);
    await expect(runner.waitFor(head, { all: true, timeoutMs: 200 })).rejects.toThrow(DatabaseUnavailableError);
    release();
    mend();
    await runner.waitFor(head, { all: true, timeoutMs: 30_000 });
    await runner.stop();
  });

  it('ends a wait at once, not at its bound, when a projection fails for a reason no retry mends, and applies all once mended', async () => {
    const { projection: refused, mend } = failingWith(
      await postgresDocumentProjection(db, summariesAs('refused_key')),
      () => new CredentialsRefusedError('the search server refused the key'),
    );
    const runner = createProjectionRunner(store, [refused], { logger: silentLogger });
    await runner.start();
    const [written] = await fill(1, 3);
    const head = await store.headPosition();
    // Bound far beyond the test's own timeout: only the failure can end the wait in time.
    await expect(runner.waitFor(head, { timeoutMs: 600_000 })).rejects.toThrow('the search server refused the key');
    mend();
    await until(async () => (await runner.status()).find((s) => s.name === 'refused_key')?.lastError === null);
    await runner.waitFor(head, { timeoutMs: 30_000 });
    expect((await snapshot('refused_key')).find((s) => s.streamId === written)).toMatchObject({ events: 3 });
    await runner.stop();
  });

  it('has a projection in an outage retried when a wait begins, and ends the wait with the outage if that fails too', async () => {
    const { projection: down, mend, attempts } = failingWith(
      await postgresDocumentProjection(db, summariesAs('outage_at_start')),
      () => new DatabaseUnavailableError('index server down'),
    );
    const runner = createProjectionRunner(store, [down], { logger: silentLogger });
    await runner.start();
    const [written] = await fill(1, 3);
    const head = await store.headPosition();
    await until(async () => (await runner.status()).find((s) => s.name === 'outage_at_start')?.lastError);
    // A write's wait during the outage answers after one more attempt, not at its bound: a bulk load goes on.
    const before = attempts();
    await expect(runner.waitFor(head, { timeoutMs: 600_000 })).rejects.toThrow('index server down');
    expect(attempts()).toBe(before + 1);
    mend();
    await runner.waitFor(head, { timeoutMs: 600_000 });
    expect((await snapshot('outage_at_start')).find((s) => s.streamId === written)).toMatchObject({ events: 3 });
    await runner.stop();
  });

  it('ends a wait once a retry fails too for a reason no adapter names, without the reason, and applies all once mended', async () => {
    // One error object thrown by every try: the retry's failure is no less a second failure.
    const fault = new Error('column "secret_internals" does not exist');
    const { projection: faulty, mend } = failingWith(await postgresDocumentProjection(db, summariesAs('faulty')), () => fault);
    const runner = createProjectionRunner(store, [faulty], { logger: silentLogger });
    await runner.start();
    const [written] = await fill(1, 3);
    const head = await store.headPosition();
    // Bound far beyond the test's own timeout: only the failure can end the wait in time.
    const failed = await runner.waitFor(head, { timeoutMs: 600_000 }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ProjectionFailingError);
    expect(failed).toMatchObject({ code: 'INTERNAL_ERROR', projection: 'faulty' });
    expect((failed as Error).message).not.toContain('secret_internals');
    mend();
    await runner.waitFor(head, { timeoutMs: 600_000 });
    expect((await snapshot('faulty')).find((s) => s.streamId === written)).toMatchObject({ events: 3 });
    await runner.stop();
  });

  it('ends a bounded wait at its bound while a projection is busy with a batch, though the wall clock was set back', async () => {
    const { projection: computing, release } = heldUntilReleased(
      await postgresDocumentProjection(db, summariesAs('busy_while_clock_set_back')),
      { computes: true },
    );
    const runner = createProjectionRunner(store, [computing], { logger: silentLogger });
    await runner.start();
    await fill(1, 2);
    const head = await store.headPosition();
    const outcome = runner.waitFor(head, { all: true, timeoutMs: 300 }).then(
      () => 'reached',
      (error: unknown) => error,
    );
    // The clock steps back (as a time sync may set it) while the wait runs; its timer is not told.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 60_000 });
    try {
      expect(await outcome).toBeInstanceOf(ProjectionLagError);
    } finally {
      vi.useRealTimers();
      release();
    }
    await runner.waitFor(head, { all: true });
    await runner.stop();
  });

  it('ends a wait for a position once the slice of a batch that reaches it is committed, before the rest of the batch', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const base = await postgresDocumentProjection(db, summariesAs('sliced_wait'));
    const streams = await fill(3, 2);
    const held = streams[2]!;
    // Like the semantic index, whose every slice takes as long as its embeddings: the last stream's wait.
    const computing: RunnableProjection = {
      ...base,
      computes: true,
      live: {
        ...base.live,
        apply: async (events, from, to) => {
          if (events.some((e) => e.streamId === held)) await released;
          return base.live.apply(events, from, to);
        },
      },
    };
    // One event a slice: every event is larger than a byte.
    const runner = createProjectionRunner(store, [computing], { logger: silentLogger, batchSize: 100_000, maxBatchBytes: 1 });
    await runner.start();
    try {
      await runner.waitFor((await store.readStream(streams[1]!)).at(-1)!.position, { all: true, timeoutMs: 600_000 });
      // Reached with the rest of the batch still held back (without a wake per slice, only the 10 min bound ends the wait).
      expect(await postgresReadModels(db).get<StreamSummary>('sliced_wait', held)).toBeNull();
    } finally {
      release();
    }
    await runner.waitFor(await store.headPosition(), { all: true });
    expect(await postgresReadModels(db).get<StreamSummary>('sliced_wait', held)).toMatchObject({ events: 2 });
    await runner.stop();
  });

  it('applies a batch larger than the byte cap in slices, each committed with its own checkpoint', async () => {
    const { projection: recording, applied } = recordingBatches(await postgresDocumentProjection(db, summariesAs('sliced')));
    const streams = await fill(6, 2);
    const bytes = JSON.stringify((await store.readStream(streams[0]!))[0]!.data).length;
    const runner = createProjectionRunner(store, [recording], {
      logger: silentLogger,
      batchSize: 100_000,
      maxBatchBytes: bytes * 3,
    });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();
    expect(applied.length).toBeGreaterThan(1);
    expect(Math.max(...applied)).toBeLessThanOrEqual(3);
    for (const stream of streams)
      expect(await postgresReadModels(db).get<StreamSummary>('sliced', stream)).toMatchObject({ events: 2 });
  });

  it('applies a batch whole, past the byte cap, to a projection that writes outside the database', async () => {
    // Like the Meilisearch keyword index, where each write costs seconds whatever its size.
    const { projection: elsewhere, applied } = recordingBatches(await postgresDocumentProjection(db, summariesAs('whole')), {
      writesElsewhere: true,
    });
    const streams = await fill(6, 2);
    const runner = createProjectionRunner(store, [elsewhere], { logger: silentLogger, batchSize: 100_000, maxBatchBytes: 1 });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();
    expect(applied).toHaveLength(1);
    for (const stream of streams)
      expect(await postgresReadModels(db).get<StreamSummary>('whole', stream)).toMatchObject({ events: 2 });
  });

  it('quarantines an event its handler throws on, applies the events around it, and a rebuild meets it again', async () => {
    const [before, bad, after] = await fill(3, 1);
    const picky = await postgresDocumentProjection(db, {
      ...summariesAs('picky'),
      evolve: (doc, event, id) => {
        if (event.streamId === bad) throw new Error('no summary for this stream');
        return streamSummaries.evolve(doc as StreamSummary | null, event, id);
      },
    });
    // One batch holds all three: the bad event must be isolated from the good ones beside it.
    const runner = createProjectionRunner(store, [picky], { logger: silentLogger, batchSize: 100_000 });
    await runner.start();
    const head = await store.headPosition();
    await runner.waitFor(head);
    const [badEvent] = await store.readStream(bad!);
    expect(await postgresReadModels(db).get('picky', before!)).toMatchObject({ events: 1 });
    expect(await postgresReadModels(db).get('picky', after!)).toMatchObject({ events: 1 });
    expect(await postgresReadModels(db).get('picky', bad!)).toBeNull();
    const quarantined = [
      {
        position: badEvent!.position,
        eventType: badEvent!.type,
        streamId: bad,
        error: expect.stringMatching(/no summary for this stream/) as unknown,
        quarantinedAt: expect.any(String) as unknown,
      },
    ];
    expect((await runner.status())[0]).toMatchObject({ checkpoint: head, lastError: null, quarantined });

    // Later events still apply.
    const [later] = await fill(1, 1);
    await runner.waitFor(await store.headPosition());
    expect(await postgresReadModels(db).get('picky', later!)).toMatchObject({ events: 1 });

    await expect(runner.rebuild('picky')).resolves.toMatchObject({ percent: 100 });
    expect((await runner.status())[0]).toMatchObject({ lastError: null, quarantined });
    await runner.stop();
  });

  it('quarantines an old event whose text the database cannot store, instead of stopping on it', async () => {
    const keepsData = await postgresDocumentProjection(db, {
      name: 'event_data',
      version: 1,
      eventTypes: ['IndexingJobStarted'],
      documentIds: (event) => [event.streamId],
      evolve: (_doc, event) => ({ data: event.data }),
    });
    const runner = createProjectionRunner(store, [keepsData], { logger: silentLogger, batchSize: 100_000 });
    const [good] = await fill(1, 1);
    const poisoned = `job-${crypto.randomUUID()}`;
    const poison = await appendUnchecked(db, poisoned, {
      type: 'IndexingJobStarted',
      schemaVersion: 1,
      data: { jobId: crypto.randomUUID(), runnerId: 'runner\u0000one' },
    });
    const [next] = await fill(1, 1);
    await runner.start();
    await runner.waitFor(await store.headPosition());
    expect(await postgresReadModels(db).get('event_data', good!)).not.toBeNull();
    expect(await postgresReadModels(db).get('event_data', next!)).not.toBeNull();
    const [status] = await runner.status();
    expect(status).toMatchObject({
      lastError: null,
      quarantined: [{ position: poison, eventType: 'IndexingJobStarted', streamId: poisoned }],
    });
    expect(status!.quarantined[0]!.error).toMatch(/Unicode escape sequence/);
    await expect(runner.rebuild('event_data')).resolves.toMatchObject({ percent: 100 });
    expect((await runner.status())[0]!.quarantined.map((q) => q.position)).toEqual([poison]);
    await runner.stop();
  });

  it('two runners on one projection apply every event exactly once', async () => {
    await fill(10, 2);
    const counting: DocumentProjection<{ seen: number }> = {
      name: 'exactly_once',
      version: 1,
      eventTypes: streamSummaries.eventTypes,
      documentIds: () => ['total'],
      evolve: (doc) => ({ seen: (doc?.seen ?? 0) + 1 }),
    };
    const runners = await Promise.all(
      [0, 1].map(async () =>
        createProjectionRunner(store, [await postgresDocumentProjection(db, counting)], {
          logger: silentLogger,
          batchSize: 3,
        }),
      ),
    );
    await Promise.all(runners.map((r) => r.start()));
    const head = await store.headPosition();
    await Promise.all(runners.map((r) => r.waitFor(head)));
    await Promise.all(runners.map((r) => r.stop()));
    const total = (await store.readAll({ maxCount: 100_000 })).length;
    expect(await postgresReadModels(db).get('exactly_once', 'total')).toEqual({ seen: total });
  });

  it('writes a batch only together with its checkpoint: from a stale one it writes nothing', async () => {
    const [stream] = await fill(1, 2);
    const events = await store.readStream(stream!);
    const sink = (await postgresDocumentProjection(db, summariesAs('stale_batch'))).live;
    const start = await sink.checkpoint();
    await sink.apply(events.slice(0, 1), start, events[0]!.position);
    await expect(sink.apply(events.slice(1), start, events[1]!.position)).rejects.toBeInstanceOf(
      CheckpointMovedError,
    );
    expect(await sink.checkpoint()).toBe(events[0]!.position);
    expect(await postgresReadModels(db).get<StreamSummary>('stale_batch', stream!)).toMatchObject({ events: 1 });
  });

  it('rebuilds into a shadow copy while queries keep reading the live one, then swaps', async () => {
    await fill(20, 2);
    const projection = await postgresDocumentProjection(db, summariesAs('rebuilt'));
    const runner = createProjectionRunner(store, [projection], { logger: silentLogger, batchSize: 10 });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    const before = await snapshot('rebuilt');

    let reads = 0;
    let readFailures = 0;
    let rebuilding = true;
    const reader = (async () => {
      while (rebuilding) {
        try {
          const rows = await snapshot('rebuilt');
          if (rows.length < before.length) readFailures++;
          reads++;
        } catch {
          readFailures++;
        }
        // Each read arrives as a task of its own, as a request does.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const progress: RebuildProgress[] = [];
    const result = await runner.rebuild('rebuilt', (p) => progress.push(p));
    rebuilding = false;
    await reader;

    const total = (await store.readAll({ maxCount: 100_000 })).length;
    expect(readFailures).toBe(0);
    expect(reads).toBeGreaterThan(0);
    expect(progress.length).toBeGreaterThan(1);
    expect(result).toMatchObject({ processedEvents: total, totalEvents: total, percent: 100, etaSeconds: 0 });
    // Progress counts up towards the total it announced, with an estimate of the time left.
    expect(progress.every((p) => p.totalEvents === total)).toBe(true);
    expect(progress.map((p) => p.percent)).toEqual([...progress.map((p) => p.percent)].sort((a, b) => a - b));
    expect(progress[0]!.percent).toBeLessThan(100);
    expect(progress.at(-1)!.percent).toBe(100);
    expect(progress.every((p) => typeof p.etaSeconds === 'number' && p.etaSeconds >= 0)).toBe(true);
    expect(await snapshot('rebuilt')).toEqual(before);
    // Still following live events after the swap.
    const [stream] = await fill(1, 1);
    await runner.waitFor(await store.headPosition());
    expect(await postgresReadModels(db).get('rebuilt', stream!)).toMatchObject({ events: 1 });
    await runner.stop();
  });

  it('rebuilds by itself when the projection version changed', async () => {
    await fill(3, 1);
    await builtAtVersionOne('versioned');

    const doubled: DocumentProjection<StreamSummary> = {
      ...summariesAs('versioned', 2),
      evolve: (doc, event, id) => {
        const next = streamSummaries.evolve(doc, event, id)!;
        return { ...next, events: (doc?.events ?? 0) + 2 };
      },
    };
    const v2 = await postgresDocumentProjection(db, doubled);
    const second = createProjectionRunner(store, [v2], { logger: silentLogger });
    await second.start();
    await expect.poll(async () => v2.liveVersion(), { timeout: 20_000 }).toBe(2);
    const rows = await snapshot('versioned');
    expect(rows.every((r) => r.events % 2 === 0)).toBe(true);
    await second.stop();
  });

  it('a version rebuild that fails is logged once and shown as the last error, the older copy serving on', async () => {
    await fill(3, 1);
    await builtAtVersionOne('unbuildable');
    const before = await snapshot('unbuildable');

    const v2 = await postgresDocumentProjection(db, summariesAs('unbuildable', 2));
    const failing = { ...v2, openShadow: () => Promise.reject(new Error('no space left on device')) };
    const logger = { ...silentLogger, error: vi.fn() };
    const runner = createProjectionRunner(store, [failing], { logger });
    await runner.start();
    await expect.poll(async () => (await runner.status())[0]!.lastError?.message, { timeout: 20_000 }).toBe(
      'Rebuild failed: no space left on device',
    );
    expect((await runner.status())[0]).toMatchObject({ state: 'running', version: 2, builtVersion: 1 });
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error).toHaveBeenCalledWith(
      { projection: 'unbuildable', error: 'no space left on device' },
      'projection rebuild failed',
    );
    expect(await snapshot('unbuildable')).toEqual(before);
    await runner.stop();
  });

  it('a version rebuild cut short by stopping, as a short command does, logs no error; the next start rebuilds', async () => {
    await fill(3, 1);
    await builtAtVersionOne('cut_short');

    const v2 = await postgresDocumentProjection(db, summariesAs('cut_short', 2));
    let closeDatabase!: () => void;
    const closed = new Promise<void>((resolve) => (closeDatabase = resolve));
    let shadowWrites = 0;
    // Its shadow writes until the database under it closes, as the ledger's close does.
    const cutShort: RunnableProjection = {
      ...v2,
      openShadow: async () => ({
        ...(await v2.openShadow()),
        apply: async () => {
          shadowWrites++;
          await closed;
          throw new DatabaseUnavailableError('The embedded database has stopped');
        },
      }),
    };
    const logger = { ...silentLogger, info: vi.fn(), error: vi.fn() };
    const second = createProjectionRunner(store, [cutShort], { logger });
    await second.start();
    await until(() => shadowWrites > 0, Boolean, { what: 'the rebuild to write' });
    await second.stop();
    closeDatabase();
    await until(
      () => logger.info.mock.calls.some(([, message]) => message === 'projection rebuild stopped with the ledger'),
      Boolean,
      { what: 'the rebuild to stop', timeoutMs: 10_000 },
    );
    expect(logger.error).not.toHaveBeenCalled();
    expect(await v2.liveVersion()).toBe(1);

    const third = createProjectionRunner(store, [v2], { logger: silentLogger });
    await third.start();
    await expect.poll(async () => v2.liveVersion(), { timeout: 20_000 }).toBe(2);
    await third.stop();
  });

  it('for a one-shot command, serves a projection built by an older version as it is, and says so', async () => {
    await fill(3, 1);
    await builtAtVersionOne('one_shot');
    const before = await snapshot('one_shot');

    const v2 = await postgresDocumentProjection(db, summariesAs('one_shot', 2));
    const logger = { ...silentLogger, warn: vi.fn() };
    const oneShot = createProjectionRunner(store, [v2], { logger, rebuildsOnVersionChange: false });
    await oneShot.start();
    const [status] = await oneShot.status();
    expect(status).toMatchObject({ name: 'one_shot', version: 2, builtVersion: 1, state: 'running', rebuild: null });
    expect(logger.warn).toHaveBeenCalledWith(
      { projection: 'one_shot', from: 1, to: 2 },
      expect.stringContaining('`ctx projections rebuild one_shot`'),
    );
    // Asked for, the rebuild runs: nothing else holds it.
    await expect(oneShot.rebuild('one_shot')).resolves.toMatchObject({ percent: 100 });
    expect(await v2.liveVersion()).toBe(2);
    expect((await oneShot.status())[0]).toMatchObject({ version: 2, builtVersion: 2 });
    expect(await snapshot('one_shot')).toEqual(before);
    await oneShot.stop();
  });

  it('refuses a second rebuild of a projection while one runs, and shows the one running', async () => {
    await fill(30, 2);
    const projection = await postgresDocumentProjection(db, summariesAs('rebuilt_once'));
    const runner = createProjectionRunner(store, [projection], { logger: silentLogger, batchSize: 5 });
    await runner.start();
    const first = runner.startRebuild('rebuilt_once');
    expect(() => runner.startRebuild('rebuilt_once')).toThrow(IllegalStateError);
    await expect(runner.rebuild('rebuilt_once')).rejects.toMatchObject({
      code: 'CONFLICT_ERROR',
      message: "Projection 'rebuilt_once' is already being rebuilt",
    });
    const [status] = await runner.status();
    expect(status).toMatchObject({ name: 'rebuilt_once', state: 'rebuilding' });
    expect(Date.parse(status!.rebuild!.startedAt)).toBeLessThanOrEqual(Date.now());
    const result = await first;
    expect(result.processedEvents).toBe(result.totalEvents);
    const [after] = await runner.status();
    expect(after).toMatchObject({ state: 'running', rebuild: null });
    // Once it is done, the next rebuild may start.
    await expect(runner.rebuild('rebuilt_once')).resolves.toMatchObject({ percent: 100 });
    await runner.stop();
  });

  it('says which projection it does not know', async () => {
    const runner = createProjectionRunner(store, [], { logger: silentLogger });
    await expect(runner.rebuild('nope')).rejects.toThrow(/No projection named 'nope'/);
    expect(() => runner.startRebuild('nope')).toThrow(NotFoundError);
  });
});

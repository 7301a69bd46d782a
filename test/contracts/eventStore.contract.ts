import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent, StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import { ConcurrencyError, PayloadTooLargeError, ValidationError } from '../../src/errors.js';
import {
  MAX_APPEND_BYTES,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
} from '../../src/ports/eventStore.js';
import { newEvent, newEvents } from '../support/events.js';
import { eventually } from '../support/polling.js';

/** A transaction that has appended but not committed, held open on its own connection. */
export interface OpenAppend {
  commit(): Promise<void>;
}

export interface EventStoreFixture {
  store: EventStore;
  cleanup(): Promise<void>;
  /**
   * Appends inside a transaction left open on a separate connection, for stores where a
   * transaction can begin before another and commit after it.
   */
  appendInOpenTransaction?(streamId: string, events: readonly NewEvent[]): Promise<OpenAppend>;
}

export interface EventStoreContractOptions {
  /** Runs the cases where several connections race (concurrent appenders, late commits). */
  concurrentRaces?: boolean;
}

const uniqueStream = (category = 'job'): string => `${category}-${randomUUID()}`;
const uniqueProject = (): string => `project-${randomUUID()}`;
const ids = (events: readonly { metadata: { eventId: string } }[]): string[] =>
  events.map((e) => e.metadata.eventId);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const concurrencyErrorOf = async (promise: Promise<unknown>): Promise<ConcurrencyError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConcurrencyError);
  return error as ConcurrencyError;
};

const connectorAdded = (project: string): NewEvent =>
  newEvent(
    {
      type: 'ConnectorAdded',
      schemaVersion: 1,
      data: { connectorId: randomUUID(), name: 'docs', kind: 'filesystem', settings: { root: '/srv' } },
    },
    { project },
  );

const documentRemoved = (project: string): NewEvent =>
  newEvent(
    { type: 'DocumentRemoved', schemaVersion: 1, data: { documentId: randomUUID(), reason: null } },
    { project },
  );

const jobFailed = (message: string): DomainEvent => ({
  type: 'IndexingJobFailed',
  schemaVersion: 1,
  data: { jobId: randomUUID(), errorType: 'test', errorMessage: message },
});

/** The event store contract: every adapter of the `EventStore` port must pass it. */
export const describeEventStoreContract = (
  name: string,
  factory: () => Promise<EventStoreFixture>,
  options: EventStoreContractOptions = {},
): void => {
  describe(`EventStore contract: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;

    beforeAll(async () => {
      fixture = await factory();
      store = fixture.store;
    });

    afterAll(async () => {
      await fixture?.cleanup();
    });

    describe('append', () => {
      it('appends to a new stream with any expected revision, then keeps numbering', async () => {
        const stream = uniqueStream();
        const first = await store.append(stream, [newEvent()], 'any');
        const second = await store.append(stream, [newEvent()], 'any');
        expect(first.nextExpectedRevision).toBe(0n);
        expect(second.nextExpectedRevision).toBe(1n);
        expect(second.position > first.position).toBe(true);
      });

      it('appends with no_stream only while the stream does not exist', async () => {
        const stream = uniqueStream();
        expect((await store.append(stream, [newEvent()], 'no_stream')).nextExpectedRevision).toBe(0n);
        const error = await concurrencyErrorOf(store.append(stream, [newEvent()], 'no_stream'));
        expect(error.actual).toBe('0');
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('appends with stream_exists only once the stream exists', async () => {
        const stream = uniqueStream();
        const error = await concurrencyErrorOf(store.append(stream, [newEvent()], 'stream_exists'));
        expect(error.actual).toBe('no_stream');
        expect(await store.readStream(stream)).toEqual([]);
        await store.append(stream, [newEvent()], 'no_stream');
        expect((await store.append(stream, [newEvent()], 'stream_exists')).nextExpectedRevision).toBe(1n);
      });

      it('appends at the exact expected revision and rejects a stale or future one', async () => {
        const stream = uniqueStream();
        await concurrencyErrorOf(store.append(stream, [newEvent()], 0n));
        await store.append(stream, newEvents(2), 'no_stream');
        expect((await store.append(stream, [newEvent()], 1n)).nextExpectedRevision).toBe(2n);
        const stale = await concurrencyErrorOf(store.append(stream, [newEvent()], 1n));
        expect(stale.actual).toBe('2');
        expect(stale.streamId).toBe(stream);
        await concurrencyErrorOf(store.append(stream, [newEvent()], 5n));
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('writes several events atomically, with consecutive revisions', async () => {
        const stream = uniqueStream();
        const events = newEvents(3);
        const result = await store.append(stream, events, 'no_stream');
        expect(result.nextExpectedRevision).toBe(2n);
        const stored = await store.readStream(stream);
        expect(ids(stored)).toEqual(ids(events));
        expect(stored.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
        expect(stored.at(-1)?.position).toBe(result.position);
      });

      it('writes nothing of a multi-event append that fails', async () => {
        const stream = uniqueStream();
        await store.append(stream, [newEvent()], 'no_stream');
        await concurrencyErrorOf(store.append(stream, newEvents(3), 'no_stream'));
        const [duplicate] = newEvents(1);
        await expect(store.append(stream, [newEvent(), duplicate!, duplicate!], 0n)).rejects.toThrow();
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('answers a retried append with the original result and writes nothing twice', async () => {
        const stream = uniqueStream();
        await store.append(stream, [newEvent()], 'no_stream');
        const events = newEvents(2);
        const original = await store.append(stream, events, 0n);
        const retried = await store.append(stream, events, 0n);
        expect(retried).toEqual(original);
        expect(await store.append(stream, events, 'any')).toEqual(original);
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('answers retries racing their original with the original result', async () => {
        const stream = uniqueStream();
        await store.append(stream, [newEvent()], 'no_stream');
        const events = newEvents(2);
        const attempts = await Promise.all(
          [0n, 0n, 'any', 0n].map((expected) => store.append(stream, events, expected as 0n)),
        );
        expect(new Set(attempts.map((a) => a.position)).size).toBe(1);
        expect(attempts.every((a) => a.nextExpectedRevision === 2n)).toBe(true);
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('keeps concurrent appends apart: a stale or failing one fails alone, the others are written', async () => {
        const streams = Array.from({ length: 6 }, () => uniqueStream());
        await store.append(streams[0]!, [newEvent()], 'no_stream');
        const [duplicate] = newEvents(1);
        const outcomes = await Promise.allSettled(
          streams.map((stream, i) =>
            i === 0
              ? store.append(stream, [newEvent()], 'no_stream')
              : i === 3
                ? store.append(stream, [duplicate!, duplicate!], 'any')
                : store.append(stream, newEvents(2), 'any'),
          ),
        );
        expect(outcomes[0]).toMatchObject({ status: 'rejected' });
        expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
        expect(outcomes[3]).toMatchObject({ status: 'rejected' });
        for (const i of [1, 2, 4, 5]) {
          expect(outcomes[i]).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 1n } });
        }
        const lengths = await Promise.all(streams.map(async (stream) => (await store.readStream(stream)).length));
        expect(lengths).toEqual([1, 2, 2, 0, 2, 2]);
      });

      it('refuses an append over the size limit and stores nothing', async () => {
        const stream = uniqueStream();
        const huge = newEvent(jobFailed('x'.repeat(MAX_APPEND_BYTES)));
        await expect(store.append(stream, [huge], 'any')).rejects.toBeInstanceOf(PayloadTooLargeError);
        const spread = Array.from({ length: 4 }, () => newEvent(jobFailed('y'.repeat(MAX_APPEND_BYTES / 3))));
        await expect(store.append(stream, spread, 'any')).rejects.toBeInstanceOf(PayloadTooLargeError);
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('refuses an event the catalog does not accept, and stores nothing', async () => {
        const stream = uniqueStream();
        const valid = newEvent();
        const invalid = { ...newEvent(), data: { jobId: 'not-a-uuid' } } as unknown as NewEvent;
        await expect(store.append(stream, [valid, invalid], 'any')).rejects.toBeInstanceOf(ValidationError);
        const badMetadata = { ...newEvent(), metadata: { ...newEvent().metadata, eventId: 'nope' } };
        await expect(store.append(stream, [badMetadata], 'any')).rejects.toBeInstanceOf(ValidationError);
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('accepts an append just under the size limit', async () => {
        const stream = uniqueStream();
        const large = newEvent(jobFailed('z'.repeat(MAX_APPEND_BYTES - 4_096)));
        await store.append(stream, [large], 'no_stream');
        const [stored] = await store.readStream(stream);
        expect(stored?.data).toEqual(large.data);
      });
    });

    describe('readStream', () => {
      const stream = uniqueStream();
      let appended: NewEvent[];

      beforeAll(async () => {
        appended = newEvents(5);
        await store.append(stream, appended, 'no_stream');
      });

      const revisions = (events: StoredEvent[]) => events.map((e) => Number(e.revision));

      it('reads back every event as written, with its stream, revision and time', async () => {
        const stored = await store.readStream(stream);
        expect(stored).toHaveLength(5);
        stored.forEach((event, index) => {
          const written = appended[index]!;
          expect(event).toMatchObject({
            type: written.type,
            schemaVersion: written.schemaVersion,
            streamId: stream,
          });
          expect(event.data).toEqual(written.data);
          expect(event.metadata).toEqual(written.metadata);
          expect(event.revision).toBe(BigInt(index));
          expect(new Date(event.recordedAt).toISOString()).toBe(event.recordedAt);
        });
      });

      it('reads forwards within revision bounds and a maximum count', async () => {
        expect(revisions(await store.readStream(stream, { fromRevision: 1n, toRevision: 3n }))).toEqual([
          1, 2, 3,
        ]);
        expect(revisions(await store.readStream(stream, { fromRevision: 2n }))).toEqual([2, 3, 4]);
        expect(revisions(await store.readStream(stream, { maxCount: 2 }))).toEqual([0, 1]);
        expect(revisions(await store.readStream(stream, { fromRevision: 3n, maxCount: 1 }))).toEqual([3]);
        expect(await store.readStream(stream, { fromRevision: 9n })).toEqual([]);
      });

      it('reads backwards from the end or from a revision', async () => {
        const backwards = { direction: 'backwards' } as const;
        expect(revisions(await store.readStream(stream, backwards))).toEqual([4, 3, 2, 1, 0]);
        expect(revisions(await store.readStream(stream, { ...backwards, maxCount: 2 }))).toEqual([4, 3]);
        expect(
          revisions(await store.readStream(stream, { ...backwards, fromRevision: 3n, toRevision: 1n })),
        ).toEqual([3, 2, 1]);
        expect(
          revisions(await store.readStream(stream, { ...backwards, fromRevision: 2n, maxCount: 5 })),
        ).toEqual([2, 1, 0]);
      });

      it('reads an unknown stream as empty', async () => {
        expect(await store.readStream(uniqueStream())).toEqual([]);
        expect(await store.readStream(uniqueStream(), { direction: 'backwards' })).toEqual([]);
      });

      it('reads several streams in one call, each whole and in order, as readStream does', async () => {
        if (!store.readStreams) return;
        const [a, b, missing] = [uniqueStream(), uniqueStream('doc'), uniqueStream()];
        await store.append(a, newEvents(3), 'no_stream');
        await store.append(b, [newEvent()], 'no_stream');
        await store.append(a, [newEvent()], 2n);
        const read = await store.readStreams([b, missing, a]);
        expect(read.get(a)).toEqual(await store.readStream(a));
        expect(read.get(a)?.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n]);
        expect(read.get(b)).toEqual(await store.readStream(b));
        expect(read.has(missing)).toBe(false);
        expect((await store.readStreams([])).size).toBe(0);
      });
    });

    describe('readAll', () => {
      it('keeps positions in order and the head at the last event across many appends', async () => {
        // Hundreds of appends carry transaction ids across a power of ten: numbers must not sort as text.
        const stream = uniqueStream();
        for (let i = 0; i < 300; i++)
          await store.append(stream, newEvents(1), i === 0 ? 'no_stream' : BigInt(i - 1));
        const all = await store.readAll({ maxCount: 1_000_000 });
        const positions = all.map((e) => e.position);
        expect(positions).toEqual([...positions].sort());
        expect(new Set(positions).size).toBe(positions.length);
        expect(await store.headPosition()).toBe(positions.at(-1));
        const written = await store.readStream(stream);
        expect(written.map((e) => e.revision)).toEqual(written.map((_, i) => BigInt(i)));
        const backwards = await store.readAll({ direction: 'backwards', maxCount: 5 });
        expect(backwards.map((e) => e.position)).toEqual(positions.slice(-5).reverse());
      });

      it('reads $all in commit order from an exclusive position, forwards and backwards', async () => {
        const head = await store.headPosition();
        const a = uniqueStream();
        const b = uniqueStream('doc');
        const a1 = newEvents(2);
        const b1 = newEvents(1);
        const a2 = newEvents(1);
        const results = [
          await store.append(a, a1, 'no_stream'),
          await store.append(b, b1, 'no_stream'),
          await store.append(a, a2, 1n),
        ];
        const written = [...a1, ...b1, ...a2];

        const forwards = await store.readAll({ from: head });
        expect(ids(forwards)).toEqual(ids(written));
        expect(forwards.map((e) => e.streamId)).toEqual([a, a, b, a]);
        expect(forwards.map((e) => e.position)).toEqual([...forwards.map((e) => e.position)].sort());
        expect(new Set(forwards.map((e) => e.position)).size).toBe(4);
        expect([forwards[1]!.position, forwards[2]!.position, forwards[3]!.position]).toEqual(
          results.map((r) => r.position),
        );

        expect(ids(await store.readAll({ from: forwards[0]!.position }))).toEqual(ids(written.slice(1)));
        expect(ids(await store.readAll({ from: head, maxCount: 2 }))).toEqual(ids(written.slice(0, 2)));
        expect(await store.readAll({ from: forwards[3]!.position })).toEqual([]);

        const backwards = await store.readAll({ direction: 'backwards', maxCount: 4 });
        expect(ids(backwards)).toEqual(ids(written).reverse());
        const before = await store.readAll({
          direction: 'backwards',
          from: forwards[3]!.position,
          maxCount: 2,
        });
        expect(ids(before)).toEqual([written[2]!, written[1]!].map((e) => e.metadata.eventId));
      });

      it('reads from the start of $all when no position is given', async () => {
        const [first] = await store.readAll({ maxCount: 1 });
        const [firstBackwardsFromEnd] = await store.readAll({ direction: 'backwards', maxCount: 1 });
        expect(first).toBeDefined();
        expect(first!.position <= firstBackwardsFromEnd!.position).toBe(true);
        expect(await store.readAll({ direction: 'backwards', from: first!.position })).toEqual([]);
      });

      it('filters $all by event type, stream category and project', async () => {
        const head = await store.headPosition();
        const mine = uniqueProject();
        const theirs = uniqueProject();
        const job = newEvent(undefined, { project: mine });
        const connector = connectorAdded(mine);
        const document = documentRemoved(theirs);
        await store.append(uniqueStream('job'), [job], 'no_stream');
        await store.append(uniqueStream('connector'), [connector], 'no_stream');
        await store.append(uniqueStream('doc'), [document], 'no_stream');

        const read = (filter: Parameters<EventStore['readAll']>[0]) =>
          store.readAll({ from: head, ...filter });
        expect(ids(await read({ filter: { eventTypes: ['ConnectorAdded'] } }))).toEqual(ids([connector]));
        expect(ids(await read({ filter: { eventTypes: ['ConnectorAdded', 'DocumentRemoved'] } }))).toEqual(
          ids([connector, document]),
        );
        expect(ids(await read({ filter: { categories: ['job', 'doc'] } }))).toEqual(ids([job, document]));
        expect(ids(await read({ filter: { project: mine } }))).toEqual(ids([job, connector]));
        expect(ids(await read({ filter: { project: mine, categories: ['connector'] } }))).toEqual(
          ids([connector]),
        );
        expect(await read({ filter: { project: theirs, eventTypes: ['IndexingJobStarted'] } })).toEqual([]);
        const latestOfMine = await store.readAll({
          direction: 'backwards',
          filter: { project: mine },
          maxCount: 1,
        });
        expect(ids(latestOfMine)).toEqual(ids([connector]));
      });

      it('counts the events after a position, up to a limit', async () => {
        const head = await store.headPosition();
        await store.append(uniqueStream(), newEvents(3), 'no_stream');
        await store.append(uniqueStream(), newEvents(2), 'no_stream');
        expect(await store.countAll({ from: head })).toBe(5);
        expect(await store.countAll({ from: head, limit: 4 })).toBe(4);
        expect(await store.countAll({ from: await store.headPosition() })).toBe(0);
        expect(await store.countAll()).toBeGreaterThanOrEqual(5);
      });

      it('reads filter values with quotes, backslashes and placeholders as plain values', async () => {
        const head = await store.headPosition();
        const subject = `o'brien "q" \\ $1 {a,b}`;
        const category = `we"ird'\\cat`;
        const event = newEvent(undefined, { actor: { subject, tenant: null, via: 'rest' } });
        await store.append(`${category}-${randomUUID()}`, [event], 'no_stream');
        const found = await store.readAll({
          from: head,
          filter: { actor: subject, categories: [category, 'job'] },
        });
        expect(ids(found)).toEqual(ids([event]));
        expect(found[0]!.metadata.actor.subject).toBe(subject);
      });

      it('filters $all by actor, command id, correlation id and recording time', async () => {
        const head = await store.headPosition();
        const project = uniqueProject();
        const correlationId = randomUUID();
        const byAlice = newEvent(undefined, {
          project,
          correlationId,
          actor: { subject: 'alice', tenant: null, via: 'rest' },
        });
        const byBob = newEvent(undefined, {
          project,
          correlationId,
          actor: { subject: 'bob', tenant: null, via: 'mcp' },
        });
        await store.append(uniqueStream(), [byAlice], 'no_stream');
        await sleep(5);
        await store.append(uniqueStream(), [byBob], 'no_stream');
        const [first, second] = await store.readAll({ from: head, filter: { project } });

        const read = (filter: Parameters<EventStore['readAll']>[0]) =>
          store.readAll({ from: head, ...filter });
        expect(ids(await read({ filter: { actor: 'alice' } }))).toEqual(ids([byAlice]));
        expect(ids(await read({ filter: { actor: 'bob', project } }))).toEqual(ids([byBob]));
        expect(ids(await read({ filter: { commandId: byBob.metadata.commandId } }))).toEqual(ids([byBob]));
        expect(ids(await read({ filter: { correlationId } }))).toEqual(ids([byAlice, byBob]));
        expect(await read({ filter: { correlationId, actor: 'carol' } })).toEqual([]);
        // Bounds are inclusive, at the recorded time each event reports.
        expect(ids(await read({ filter: { project, since: second!.recordedAt } }))).toEqual(ids([byBob]));
        expect(ids(await read({ filter: { project, until: first!.recordedAt } }))).toEqual(ids([byAlice]));
        expect(
          ids(await read({ filter: { project, since: first!.recordedAt, until: second!.recordedAt } })),
        ).toEqual(ids([byAlice, byBob]));
      });

      it('reports the position of the last event as the head', async () => {
        const result = await store.append(uniqueStream(), newEvents(2), 'no_stream');
        expect(await store.headPosition()).toBe(result.position);
        const [last] = await store.readAll({ direction: 'backwards', maxCount: 1 });
        expect(last?.position).toBe(result.position);
      });
    });

    describe('subscribe', () => {
      it('catches up from a checkpoint, follows live appends, and stops when told', async () => {
        const project = uniqueProject();
        const stream = uniqueStream();
        const earlier = newEvents(3, { project });
        await store.append(stream, earlier.slice(0, 1), 'no_stream');
        const [checkpointEvent] = await store.readStream(stream);
        await store.append(stream, earlier.slice(1), 0n);

        const received: StoredEvent[] = [];
        const batchSizes: number[] = [];
        const subscription = store.subscribe(
          async (events) => {
            batchSizes.push(events.length);
            received.push(...events);
            await sleep(1);
          },
          { from: checkpointEvent!.position, filter: { project }, batchSize: 1 },
        );
        await eventually(() => expect(ids(received)).toEqual(ids(earlier.slice(1))));

        const live = newEvents(2, { project });
        await store.append(stream, live.slice(0, 1), 2n);
        await store.append(stream, live.slice(1), 3n);
        await eventually(() => expect(ids(received)).toEqual(ids([...earlier.slice(1), ...live])));
        expect(batchSizes.every((size) => size === 1)).toBe(true);

        await subscription.stop();
        await store.append(stream, newEvents(1, { project }), 4n);
        await sleep(300);
        expect(received).toHaveLength(4);
      });

      it('hands over batches in order, one at a time', async () => {
        const project = uniqueProject();
        const head = await store.headPosition();
        const events = newEvents(7, { project });
        await store.append(uniqueStream(), events, 'no_stream');

        const received: Position[] = [];
        let running = 0;
        let overlapped = false;
        const subscription = store.subscribe(
          async (batch) => {
            running += 1;
            overlapped ||= running > 1;
            await sleep(5);
            received.push(...batch.map((e) => e.position));
            running -= 1;
          },
          { from: head, filter: { project }, batchSize: 3 },
        );
        await eventually(() => expect(received).toHaveLength(7));
        await subscription.stop();
        expect(received).toEqual([...received].sort());
        expect(overlapped).toBe(false);
      });
    });

    describe.runIf(options.concurrentRaces)('races', () => {
      it('lets exactly one of many concurrent appenders win each revision', async () => {
        const stream = uniqueStream();
        const writers = 8;
        const rounds = 4;
        for (let round = 0; round < rounds; round += 1) {
          const expected: ExpectedRevision = round === 0 ? 'no_stream' : BigInt(round - 1);
          const outcomes = await Promise.allSettled(
            Array.from({ length: writers }, () => store.append(stream, [newEvent()], expected)),
          );
          const won = outcomes.filter((o) => o.status === 'fulfilled');
          const lost = outcomes.filter((o) => o.status === 'rejected');
          expect(won).toHaveLength(1);
          expect(won[0]!.value.nextExpectedRevision).toBe(BigInt(round));
          for (const outcome of lost) expect(outcome.reason).toBeInstanceOf(ConcurrencyError);
        }
        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n]);
      });

      it('never lets a reader skip an event whose transaction began earlier but committed later', async (context) => {
        if (!fixture.appendInOpenTransaction) {
          context.skip('this store cannot hold a transaction open');
          return;
        }
        const project = uniqueProject();
        const head = await store.headPosition();
        const received: StoredEvent[] = [];
        const subscription = store.subscribe(
          async (events) => {
            received.push(...events);
            await Promise.resolve();
          },
          { from: head, filter: { project } },
        );

        const early = newEvent(undefined, { project });
        const late = newEvent(undefined, { project });
        const open = await fixture.appendInOpenTransaction(uniqueStream(), [early]);
        let committed = false;
        try {
          const lateResult = await store.append(uniqueStream(), [late], 'no_stream');
          expect(await store.readAll({ from: head, filter: { project } })).toEqual([]);
          expect((await store.headPosition()) < lateResult.position).toBe(true);
          await sleep(300);
          expect(received).toEqual([]);
          await open.commit();
          committed = true;
        } finally {
          if (!committed) await open.commit();
        }

        const read = await store.readAll({ from: head, filter: { project } });
        expect(ids(read)).toEqual(ids([early, late]));
        await eventually(() => expect(ids(received)).toEqual(ids([early, late])));
        await subscription.stop();
      });
    });
  });
};

import { PassThrough } from 'node:stream';
import {
  ANY,
  MaxAppendSizeExceededError,
  NO_STREAM,
  STREAM_EXISTS,
  UnavailableError as EsdbUnavailableError,
  WrongExpectedVersionError,
  type RecordedEvent,
  type RegexFilter,
  type PrefixesFilter,
} from '@kurrent/kurrentdb-client';
import { describe, expect, it } from 'vitest';
import { connectEsdb } from '../../infra/eventstore/esdbEventStore.js';
import { batchesOf } from '../../infra/eventstore/esdbBatches.js';
import { translateEsdbError } from '../../infra/eventstore/esdbErrors.js';
import {
  fromEsdbPosition,
  fromRecordedEvent,
  isSystemEvent,
  matchesFilter,
  serverFilter,
  toEsdbExpectedRevision,
  toEsdbPosition,
  toEventData,
} from '../../infra/eventstore/esdbMapping.js';
import { comparePositions } from '../../src/domain/position.js';
import {
  ConcurrencyError,
  PayloadTooLargeError,
  UnavailableError,
  ValidationError,
} from '../../src/errors.js';
import { MAX_APPEND_BYTES } from '../../src/ports/eventStore.js';
import { newEvent, newEvents } from '../support/events.js';

/** What EventStoreDB hands back for an event the adapter wrote. */
const recordedFrom = (
  streamId: string,
  revision: bigint,
  data: ReturnType<typeof toEventData>[number],
): RecordedEvent => ({
  streamId,
  id: data.id,
  isJson: true,
  revision,
  type: data.type,
  created: new Date('2026-01-02T03:04:05.678Z'),
  data: data.data,
  metadata: data.metadata,
  position: { commit: 1_000n + revision, prepare: 1_000n + revision },
});

describe('EventStoreDB mapping', () => {
  it('maps every expected revision onto the server’s, keeping 0-based numbers as they are', () => {
    expect(toEsdbExpectedRevision('any')).toBe(ANY);
    expect(toEsdbExpectedRevision('no_stream')).toBe(NO_STREAM);
    expect(toEsdbExpectedRevision('stream_exists')).toBe(STREAM_EXISTS);
    expect(toEsdbExpectedRevision(0n)).toBe(0n);
    expect(toEsdbExpectedRevision(41n)).toBe(41n);
  });

  it('turns (commit, prepare) into positions that sort as the log does, and back', () => {
    const positions = [
      { commit: 9n, prepare: 9n },
      { commit: 10n, prepare: 8n },
      { commit: 10n, prepare: 10n },
      { commit: 18_446_744_073_709_551_615n, prepare: 0n },
    ].map(fromEsdbPosition);
    expect([...positions].sort(comparePositions)).toEqual(positions);
    expect(toEsdbPosition(positions[1]!)).toEqual({ commit: 10n, prepare: 8n });
  });

  it('keys each event by the ledger’s event id and carries schema version and correlation in metadata', () => {
    const event = newEvent(undefined, { causationId: 'cause-1' });
    const [data] = toEventData([event], 'job-1');
    expect(data).toMatchObject({
      id: event.metadata.eventId,
      type: event.type,
      contentType: 'application/json',
    });
    expect(data!.metadata).toMatchObject({
      ...event.metadata,
      schemaVersion: 1,
      $correlationId: event.metadata.correlationId,
      $causationId: 'cause-1',
    });
  });

  it('reads back what it wrote: same event, metadata, revision and time', () => {
    const events = newEvents(2);
    const stored = toEventData(events, 'job-7').map((data, i) =>
      fromRecordedEvent(recordedFrom('job-7', BigInt(i), data), { commit: 5n, prepare: BigInt(i) }),
    );
    stored.forEach((event, i) => {
      expect(event).toMatchObject({
        type: events[i]!.type,
        schemaVersion: 1,
        streamId: 'job-7',
        revision: BigInt(i),
      });
      expect(event.data).toEqual(events[i]!.data);
      expect(event.metadata).toEqual(events[i]!.metadata);
      expect(event.recordedAt).toBe('2026-01-02T03:04:05.678Z');
    });
    expect(stored[0]!.position < stored[1]!.position).toBe(true);
  });

  it('refuses repeated event ids, invalid events and oversized appends before they reach the server', () => {
    const event = newEvent();
    expect(() => toEventData([event, event], 'job-1')).toThrow(ValidationError);
    const invalid = { ...newEvent(), data: { jobId: 'nope' } } as unknown as ReturnType<typeof newEvent>;
    expect(() => toEventData([invalid], 'job-1')).toThrow(ValidationError);
    const huge = newEvent({
      type: 'IndexingJobFailed',
      schemaVersion: 1,
      data: { jobId: crypto.randomUUID(), errorType: 'x', errorMessage: 'x'.repeat(MAX_APPEND_BYTES) },
    });
    expect(() => toEventData([huge], 'job-1')).toThrow(PayloadTooLargeError);
  });
});

describe('EventStoreDB errors', () => {
  it('reports a wrong expected version as a concurrency conflict with the actual revision', () => {
    const stale = translateEsdbError(
      new WrongExpectedVersionError(undefined, { streamName: 'job-1', expected: 1n, current: 2n }),
      { streamId: 'job-1', expected: 1n },
    );
    expect(stale).toBeInstanceOf(ConcurrencyError);
    expect(stale).toMatchObject({ streamId: 'job-1', expected: '1', actual: '2' });
    const missing = translateEsdbError(
      new WrongExpectedVersionError(undefined, {
        streamName: 'job-2',
        expected: STREAM_EXISTS,
        current: NO_STREAM,
      }),
      { streamId: 'job-2', expected: 'stream_exists' },
    );
    expect(missing).toMatchObject({ expected: 'stream_exists', actual: 'no_stream' });
  });

  it('reports an oversized append and an unreachable server in the port’s terms', () => {
    expect(translateEsdbError(new MaxAppendSizeExceededError(undefined, 1024))).toBeInstanceOf(
      PayloadTooLargeError,
    );
    expect(translateEsdbError(new EsdbUnavailableError(undefined, 'connection refused'))).toBeInstanceOf(
      UnavailableError,
    );
    const other = new Error('something else');
    expect(translateEsdbError(other)).toBe(other);
  });
});

describe('EventStoreDB filters', () => {
  const recorded = (type: string, streamId: string, project = 'p1') =>
    ({ type, streamId, metadata: { project } }) as unknown as RecordedEvent;

  it('asks the server for exact event types, escaped as a regex', () => {
    const filter = serverFilter({ eventTypes: ['DocumentIngested', 'IndexingJobFailed'] }) as RegexFilter;
    expect(filter.filterOn).toBe('eventType');
    const regex = new RegExp(filter.regex);
    expect(regex.test('DocumentIngested')).toBe(true);
    expect(regex.test('DocumentIngestedLater')).toBe(false);
    expect(regex.test('XIndexingJobFailed')).toBe(false);
  });

  it('asks the server for stream prefixes by category, and for no system events otherwise', () => {
    const byCategory = serverFilter({ categories: ['doc', 'job'] }) as PrefixesFilter;
    expect(byCategory).toMatchObject({ filterOn: 'streamName', prefixes: ['doc-', 'job-'] });
    const none = serverFilter(undefined) as RegexFilter;
    expect(new RegExp(none.regex).test('$statistics-collected')).toBe(false);
    expect(new RegExp(none.regex).test('DocumentIngested')).toBe(true);
  });

  it('drops system events and applies the whole filter on this side', () => {
    expect(isSystemEvent(recorded('$metadata', 'job-1'))).toBe(true);
    expect(isSystemEvent(recorded('DocumentIngested', '$$doc-1'))).toBe(true);
    const doc = recorded('DocumentIngested', 'doc-1');
    expect(matchesFilter(doc, undefined)).toBe(true);
    expect(matchesFilter(doc, { eventTypes: ['DocumentIngested'], categories: ['doc'], project: 'p1' })).toBe(
      true,
    );
    expect(matchesFilter(doc, { eventTypes: ['DocumentIngested'], categories: ['job'] })).toBe(false);
    expect(matchesFilter(doc, { project: 'p2' })).toBe(false);
    expect(matchesFilter(recorded('$>', 'doc-1'), undefined)).toBe(false);
  });
});

describe('subscription batches', () => {
  const collect = async <T>(source: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const item of source) out.push(item);
    return out;
  };

  it('hands over full batches of what is already buffered while catching up', async () => {
    const source = new PassThrough({ objectMode: true });
    for (let i = 1; i <= 7; i += 1) source.write(i);
    source.end();
    expect(await collect(batchesOf(source, 3, (n: number) => n))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('hands over a partial batch at once when nothing more is buffered', async () => {
    const source = new PassThrough({ objectMode: true });
    const batches = batchesOf(source, 100, (n: number) => n);
    source.write(1);
    source.write(2);
    expect((await batches.next()).value).toEqual([1, 2]);
    source.write(3);
    expect((await batches.next()).value).toEqual([3]);
    source.end();
    expect((await batches.next()).done).toBe(true);
  });

  it('drops what the converter rejects and never yields an empty batch', async () => {
    const source = new PassThrough({ objectMode: true });
    for (const n of [1, 2, 3, 4, 5, 6]) source.write(n);
    source.end();
    const odd = (n: number) => (n % 2 ? n : null);
    const batches = await collect(batchesOf(source, 2, odd));
    expect(batches.flat()).toEqual([1, 3, 5]);
    expect(batches.every((b) => b.length > 0)).toBe(true);
  });
});

describe('EventStoreDB connection strings', () => {
  it('takes the kurrentdb schemes and the older esdb ones alike', async () => {
    for (const url of ['kurrentdb://127.0.0.1:1?tls=false', 'esdb://127.0.0.1:1?tls=false', 'esdb+discover://127.0.0.1:1?tls=false']) {
      const client = connectEsdb(url);
      await client.dispose();
    }
    expect(() => connectEsdb('http://127.0.0.1:1')).toThrow();
  });
});

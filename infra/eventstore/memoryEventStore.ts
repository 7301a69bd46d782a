import { parseStoredEvent, type StoredEvent } from '../../src/domain/events.js';
import type { EventMetadata } from '../../src/domain/metadata.js';
import { START, position, type Position } from '../../src/domain/position.js';
import { ConcurrencyError, ValidationError } from '../../src/errors.js';
import {
  matchesAllFilter,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
} from '../../src/ports/eventStore.js';
import { prepareAppend, type PreparedAppend } from './preparedAppend.js';

/** An event as kept: its payload in JSON, so that no reader shares (or changes) what another reads. */
interface Kept {
  streamId: string;
  revision: bigint;
  position: Position;
  type: string;
  schemaVersion: number;
  data: string;
  metadata: string;
  recordedAt: string;
}

const DEFAULT_BATCH = 500;
/** A failing handler is retried after this. */
const RETRY_DELAY_MS = 50;

/**
 * The event store in this process's memory: for tests of the fast tier and throwaway runs. It keeps
 * every invariant of the port (the same contract suite checks it); appends are atomic because
 * each one runs to its end without yielding.
 */
export const createMemoryEventStore = (): EventStore => {
  const all: Kept[] = [];
  const streams = new Map<string, Kept[]>();
  const firstEventIds = new Set<string>();
  let appends = 0n;
  const wakers = new Set<() => void>();

  const revisionOf = (streamId: string): bigint | undefined => {
    const stream = streams.get(streamId);
    return stream?.length ? BigInt(stream.length - 1) : undefined;
  };

  /** What the original of a retried append wrote: the same first event id, as many events. */
  const original = (append: PreparedAppend): AppendResult | undefined => {
    const stream = streams.get(append.streamId) ?? [];
    const first = stream.findIndex(
      (e) => (JSON.parse(e.metadata) as EventMetadata).eventId === append.firstEventId,
    );
    const last = first < 0 ? undefined : stream[first + append.events.length - 1];
    return last && { nextExpectedRevision: last.revision, position: last.position };
  };

  const check = (streamId: string, expected: ExpectedRevision) => {
    const actual = revisionOf(streamId);
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === undefined) ||
      (expected === 'stream_exists' && actual !== undefined) ||
      (typeof expected === 'bigint' && actual === expected);
    if (!ok)
      throw new ConcurrencyError(
        streamId,
        String(expected),
        actual === undefined ? 'no_stream' : actual.toString(),
      );
  };

  const write = (append: PreparedAppend): AppendResult => {
    const retried = original(append);
    if (retried) return retried;
    check(append.streamId, append.expected);
    if (firstEventIds.has(append.firstEventId)) {
      throw new ValidationError(`Event id '${append.firstEventId}' is already stored`);
    }
    firstEventIds.add(append.firstEventId);
    appends += 1n;
    const stream = streams.get(append.streamId) ?? [];
    streams.set(append.streamId, stream);
    const recordedAt = new Date().toISOString();
    for (const event of append.events) {
      const kept: Kept = {
        streamId: append.streamId,
        revision: BigInt(stream.length),
        position: position(appends, all.length + 1),
        type: event.type,
        schemaVersion: event.schemaVersion,
        data: event.data,
        metadata: event.metadata,
        recordedAt,
      };
      stream.push(kept);
      all.push(kept);
    }
    const last = stream.at(-1)!;
    return { nextExpectedRevision: last.revision, position: last.position };
  };

  const stored = (kept: Kept): StoredEvent => ({
    ...parseStoredEvent(kept.type, kept.schemaVersion, JSON.parse(kept.data)),
    streamId: kept.streamId,
    revision: kept.revision,
    position: kept.position,
    metadata: JSON.parse(kept.metadata) as EventMetadata,
    recordedAt: kept.recordedAt,
  });

  const readStream = async (streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> => {
    const backwards = options.direction === 'backwards';
    const events = [...(streams.get(streamId) ?? [])];
    if (backwards) events.reverse();
    const { fromRevision: from, toRevision: to } = options;
    const inBounds = events.filter((e) =>
      backwards
        ? (from === undefined || e.revision <= from) && (to === undefined || e.revision >= to)
        : (from === undefined || e.revision >= from) && (to === undefined || e.revision <= to),
    );
    return Promise.resolve(inBounds.slice(0, options.maxCount).map(stored));
  };

  const readStreams = async (streamIds: readonly string[]): Promise<Map<string, StoredEvent[]>> => {
    const read = new Map<string, StoredEvent[]>();
    for (const streamId of streamIds) {
      const events = streams.get(streamId);
      if (events?.length) read.set(streamId, events.map(stored));
    }
    return Promise.resolve(read);
  };

  const matching = (kept: Kept, options: ReadAllOptions) =>
    matchesAllFilter(
      {
        streamId: kept.streamId,
        type: kept.type,
        recordedAt: kept.recordedAt,
        metadata: JSON.parse(kept.metadata) as EventMetadata,
      },
      options.filter,
    );

  const readAll = async (options: ReadAllOptions = {}): Promise<StoredEvent[]> => {
    const backwards = options.direction === 'backwards';
    const { from } = options;
    const limit = options.maxCount ?? Infinity;
    const found: StoredEvent[] = [];
    const inRange = (kept: Kept) =>
      from === undefined || (backwards ? from === START || kept.position < from : kept.position > from);
    for (let i = 0; i < all.length && found.length < limit; i++) {
      const kept = all[backwards ? all.length - 1 - i : i]!;
      if (inRange(kept) && matching(kept, options)) found.push(stored(kept));
    }
    return Promise.resolve(found);
  };

  const countAll = async ({ from, limit }: { from?: Position; limit?: number } = {}): Promise<number> => {
    const after = from === undefined ? all.length : all.filter((e) => e.position > from).length;
    return Promise.resolve(Math.min(after, limit ?? Infinity));
  };

  const subscribe: EventStore['subscribe'] = (
    handler,
    { from, filter, batchSize = DEFAULT_BATCH, onError }: SubscribeOptions,
  ) => {
    let stopped = false;
    let wake: () => void = () => undefined;
    const waitForAppend = (ms?: number) =>
      new Promise<void>((resolve) => {
        const timer = ms === undefined ? undefined : setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wakers.delete(done);
          wake = () => undefined;
          resolve();
        }
        wake = done;
        // After a failure only time (or stop) ends the wait; otherwise the next append does.
        if (ms === undefined) wakers.add(done);
      });
    const loop = async () => {
      let checkpoint = from;
      while (!stopped) {
        const seen = all.length;
        const events = await readAll({ from: checkpoint, maxCount: batchSize, filter });
        if (events.length === 0) {
          // An append made while reading must not wait for the next one.
          if (!stopped && all.length === seen) await waitForAppend();
          continue;
        }
        try {
          await handler(events);
          checkpoint = events.at(-1)!.position;
        } catch (error) {
          onError?.(error);
          if (!stopped) await waitForAppend(RETRY_DELAY_MS);
        }
      }
    };
    const running = loop();
    return {
      stop: async () => {
        stopped = true;
        wake();
        await running;
      },
    };
  };

  return {
    name: 'memory',
    append: async (streamId, events, expected) => {
      const result = write(prepareAppend(streamId, events, expected));
      wakers.forEach((w) => w());
      return Promise.resolve(result);
    },
    readStream,
    readStreams,
    readAll,
    countAll,
    headPosition: async () => Promise.resolve(all.at(-1)?.position ?? START),
    subscribe,
    knownRevision: revisionOf,
    close: async () => Promise.resolve(),
  };
};

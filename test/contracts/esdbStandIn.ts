import { PassThrough } from 'node:stream';
import {
  NO_STREAM,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendStreamState,
  type KurrentDBClient,
  type Filter,
  type JSONEventData,
  type Position,
  type ReadPosition,
  type ReadRevision,
} from '@kurrent/kurrentdb-client';

interface Recorded {
  streamId: string;
  id: string;
  isJson: true;
  revision: bigint;
  type: string;
  created: Date;
  data: unknown;
  metadata: unknown;
  position: Position;
}

const after = (a: Position, b: Position) =>
  a.commit > b.commit || (a.commit === b.commit && a.prepare > b.prepare);

const passes = (filter: Filter | undefined, event: Recorded): boolean => {
  if (!filter) return true;
  const subject = filter.filterOn === 'eventType' ? event.type : event.streamId;
  return 'regex' in filter
    ? new RegExp(filter.regex).test(subject)
    : filter.prefixes.some((prefix) => subject.startsWith(prefix));
};

/**
 * An in-memory stand-in for the parts of the EventStoreDB client the adapter calls, following the
 * server's documented behaviour: revisions from 0, positions (commit, prepare) growing with the log,
 * wrong expected versions thrown, a retried append at its exact revision ignored, `$all` read from a
 * position inclusively forwards and exclusively backwards, system events in the log, and filtered
 * catch-up subscriptions with checkpoints. It lets the adapter's own logic run without a server;
 * the real server is covered by the contract suite where one is reachable.
 */
export const esdbStandIn = () => {
  const log: Recorded[] = [];
  const streams = new Map<string, Recorded[]>();
  const live = new Set<(event: Recorded) => void>();
  let offset = 1_000n;

  const write = (streamId: string, data: { id: string; type: string; data: unknown; metadata: unknown }) => {
    const stream = streams.get(streamId) ?? [];
    streams.set(streamId, stream);
    offset += 137n;
    const event: Recorded = {
      streamId,
      id: data.id,
      isJson: true,
      revision: BigInt(stream.length),
      type: data.type,
      created: new Date(),
      data: data.data,
      metadata: data.metadata,
      position: { commit: offset, prepare: offset },
    };
    stream.push(event);
    log.push(event);
    live.forEach((push) => push(event));
    return event;
  };
  const writeSystemEvent = () =>
    write('$stats-127.0.0.1:2113', {
      id: crypto.randomUUID(),
      type: '$statistics-collected',
      data: {},
      metadata: {},
    });
  writeSystemEvent();

  const fromArray = async function* (events: Recorded[]): AsyncGenerator<AllStreamResolvedEvent> {
    for (const event of events) {
      await Promise.resolve();
      yield { event } as AllStreamResolvedEvent;
    }
  };

  const client = {
    appendToStream(
      streamName: string,
      events: JSONEventData[],
      { streamState: expectedRevision = 'any' }: { streamState?: AppendStreamState } = {},
    ) {
      const stream = streams.get(streamName) ?? [];
      const current = stream.length === 0 ? NO_STREAM : BigInt(stream.length - 1);
      if (
        typeof expectedRevision === 'bigint' &&
        stream[Number(expectedRevision) + 1]?.id === events[0]?.id
      ) {
        const last = stream[Number(expectedRevision) + events.length]!;
        return Promise.resolve({ success: true, nextExpectedRevision: last.revision });
      }
      const fits =
        expectedRevision === 'any' ||
        (expectedRevision === 'no_stream' && current === NO_STREAM) ||
        (expectedRevision === 'stream_exists' && current !== NO_STREAM) ||
        expectedRevision === current;
      if (!fits) {
        return Promise.reject(
          new WrongExpectedVersionError(undefined, { streamName, expected: expectedRevision, current }),
        );
      }
      const written = events.map((event) => write(streamName, event));
      if (log.length % 5 === 0) writeSystemEvent();
      const last = written.at(-1)!;
      return Promise.resolve({ success: true, nextExpectedRevision: last.revision, position: last.position });
    },

    readStream(
      streamName: string,
      {
        direction = 'forwards',
        fromRevision = 'start',
        maxCount = Number.MAX_SAFE_INTEGER,
      }: { direction?: string; fromRevision?: ReadRevision; maxCount?: number | bigint } = {},
    ) {
      const stream = streams.get(streamName);
      return (async function* () {
        await Promise.resolve();
        if (!stream) throw new StreamNotFoundError(undefined, streamName);
        const backwards = direction === 'backwards';
        const ordered = backwards ? [...stream].reverse() : stream;
        const from = fromRevision === 'start' || fromRevision === 'end' ? undefined : fromRevision;
        const selected = ordered
          .filter((e) => from === undefined || (backwards ? e.revision <= from : e.revision >= from))
          .slice(0, Number(maxCount));
        yield* fromArray(selected);
      })();
    },

    readAll({
      direction = 'forwards',
      fromPosition = 'start',
      maxCount = Number.MAX_SAFE_INTEGER,
    }: { direction?: string; fromPosition?: ReadPosition; maxCount?: number | bigint } = {}) {
      const backwards = direction === 'backwards';
      const ordered = backwards ? [...log].reverse() : [...log];
      const selected = ordered.filter((e) => {
        if (typeof fromPosition === 'string') return true;
        return backwards ? after(fromPosition, e.position) : !after(fromPosition, e.position);
      });
      return fromArray(selected.slice(0, Number(maxCount)));
    },

    subscribeToAll({
      fromPosition = 'start',
      filter,
    }: { fromPosition?: ReadPosition; filter?: Filter } = {}) {
      const stream = new PassThrough({ objectMode: true }) as unknown as AllStreamSubscription & PassThrough;
      let skipped = 0;
      const offer = (event: Recorded) => {
        if (passes(filter, event)) {
          stream.write({ event });
          return;
        }
        skipped += 1;
        if (filter?.checkpointReached && skipped % (filter.checkpointInterval || 1) === 0) {
          void filter.checkpointReached(stream, event.position);
        }
      };
      const push = (event: Recorded) => offer(event);
      for (const event of log) {
        if (typeof fromPosition !== 'string' && !after(event.position, fromPosition)) continue;
        offer(event);
      }
      live.add(push);
      (stream as { unsubscribe: () => Promise<void> }).unsubscribe = () => {
        live.delete(push);
        stream.end();
        return Promise.resolve();
      };
      return stream;
    },

    dispose: () => Promise.resolve(),
  };
  return { client: client as unknown as KurrentDBClient, log };
};

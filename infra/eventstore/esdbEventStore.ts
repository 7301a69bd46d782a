import {
  BACKWARDS,
  END,
  KurrentDBClient,
  FORWARDS,
  START as ESDB_START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type ReadPosition,
} from '@kurrent/kurrentdb-client';
import type { StoredEvent } from '../../src/domain/events.js';
import { ConcurrencyError } from '../../src/errors.js';
import { START, type Position } from '../../src/domain/position.js';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
} from '../../src/ports/eventStore.js';
import { translateEsdbError } from './esdbErrors.js';
import {
  fromEsdbPosition,
  fromRecordedEvent,
  matchesFilter,
  toEsdbExpectedRevision,
  toEsdbPosition,
  toEventData,
} from './esdbMapping.js';
import { subscribeToAll } from './esdbSubscription.js';

/** Events read from `$all` per request while filtering on this side. */
const ALL_PAGE = 500;
/** Events read per request while looking for an earlier append of the same events. */
const SCAN_PAGE = 200;

export interface EsdbEventStoreOptions {
  /** How long a dropped subscription waits before it subscribes again. */
  retryDelayMs?: number;
}

/**
 * Opens a client from a connection string, e.g. `kurrentdb://host:2113?tls=true&tlsCAFile=/certs/ca.crt`
 * (TLS and its CA file, keep-alive and node preference are all set there). It speaks to KurrentDB
 * and to EventStoreDB (the same server before its rename); the older `esdb://` and
 * `esdb+discover://` schemes are taken as their `kurrentdb` equivalents.
 */
export const connectEsdb = (connectionString: string): KurrentDBClient =>
  KurrentDBClient.connectionString(connectionString.replace(/^esdb(\+discover)?:\/\//, 'kurrentdb$1://'));

/**
 * The event store on EventStoreDB. Revisions are EventStoreDB's own (both count from 0); positions
 * are its (commit, prepare) pairs. EventStoreDB ignores a retried append of the same event ids at
 * an exact expected revision; for the other expectations, and after a conflict, the stream is
 * searched for the first event id so that a retry always answers with the original result.
 */
export const createEsdbEventStore = (
  client: KurrentDBClient,
  options: EsdbEventStoreOptions = {},
): EventStore => {
  const readStreamRaw = async (
    streamId: string,
    { direction = 'forwards', fromRevision, toRevision, maxCount }: ReadStreamOptions = {},
  ): Promise<StoredEvent[]> => {
    const backwards = direction === 'backwards';
    const span =
      fromRevision !== undefined && toRevision !== undefined
        ? Number(backwards ? fromRevision - toRevision : toRevision - fromRevision) + 1
        : !backwards && toRevision !== undefined
          ? Number(toRevision) + 1
          : undefined;
    const count = Math.min(maxCount ?? Number.MAX_SAFE_INTEGER, span ?? Number.MAX_SAFE_INTEGER);
    if (count <= 0) return [];
    const events: StoredEvent[] = [];
    try {
      const read = client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: fromRevision ?? (backwards ? END : ESDB_START),
        maxCount: count,
      });
      for await (const resolved of read) {
        const recorded = resolved.event;
        if (!recorded?.position) continue;
        if (
          toRevision !== undefined &&
          (backwards ? recorded.revision < toRevision : recorded.revision > toRevision)
        )
          break;
        events.push(fromRecordedEvent(recorded, recorded.position));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw translateEsdbError(error);
    }
    return events;
  };

  /** The result of an earlier append whose first event has `eventId`, if the stream holds one. */
  const findAppended = async (
    streamId: string,
    eventIds: readonly string[],
  ): Promise<AppendResult | null> => {
    const [firstId] = eventIds;
    let from: bigint | undefined;
    const seen = new Map<bigint, StoredEvent>();
    for (;;) {
      const page = await readStreamRaw(streamId, {
        direction: 'backwards',
        fromRevision: from,
        maxCount: SCAN_PAGE,
      });
      for (const event of page) {
        seen.set(event.revision, event);
        if (event.metadata.eventId !== firstId) continue;
        const lastRevision = event.revision + BigInt(eventIds.length - 1);
        const last =
          seen.get(lastRevision) ??
          (await readStreamRaw(streamId, { fromRevision: lastRevision, maxCount: 1 }))[0];
        return last ? { nextExpectedRevision: last.revision, position: last.position } : null;
      }
      const oldest = page.at(-1);
      if (page.length < SCAN_PAGE || !oldest || oldest.revision === 0n) return null;
      from = oldest.revision - 1n;
    }
  };

  const append = async (
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> => {
    const data = toEventData(events, streamId);
    const eventIds = data.map((d) => d.id);
    // The server recognises a retry only at an exact revision (and from a bounded cache otherwise).
    if (expected === 'any' || expected === 'stream_exists') {
      const earlier = await findAppended(streamId, eventIds);
      if (earlier) return earlier;
    }
    let result: { success: boolean; nextExpectedRevision: bigint };
    try {
      result = await client.appendToStream(streamId, data, {
        streamState: toEsdbExpectedRevision(expected),
      });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const earlier = await findAppended(streamId, eventIds);
        if (earlier) return earlier;
      }
      throw translateEsdbError(error, { streamId, expected });
    }
    // With `throwOnAppendFailure=false` in the connection string a conflict is reported, not thrown.
    if (!result.success) {
      const earlier = await findAppended(streamId, eventIds);
      if (earlier) return earlier;
      const [last] = await readStreamRaw(streamId, { direction: 'backwards', maxCount: 1 });
      throw new ConcurrencyError(streamId, String(expected), last ? last.revision.toString() : 'no_stream');
    }
    const { nextExpectedRevision } = result;
    // The reply's position is not the last event's `$all` position in every case (an ignored retry
    // carries none), so it is read back.
    const [last] = await readStreamRaw(streamId, { fromRevision: nextExpectedRevision, maxCount: 1 });
    if (!last)
      throw new Error(`Event ${nextExpectedRevision} of '${streamId}' vanished right after its append`);
    return { nextExpectedRevision, position: last.position };
  };

  /** Pages through `$all`, filtering on this side (reads of `$all` take no server filters here). */
  const readAll = async ({ from, direction = 'forwards', maxCount, filter }: ReadAllOptions = {}): Promise<
    StoredEvent[]
  > => {
    const backwards = direction === 'backwards';
    const wanted = maxCount ?? Number.MAX_SAFE_INTEGER;
    if (wanted <= 0 || (backwards && from === START)) return [];
    const events: StoredEvent[] = [];
    let cursor: ReadPosition =
      from === undefined || from === START ? (backwards ? END : ESDB_START) : toEsdbPosition(from);
    let after: Position | undefined = from;
    for (;;) {
      let read = 0;
      let last: AllStreamResolvedEvent['event'];
      try {
        for await (const resolved of client.readAll({
          direction: backwards ? BACKWARDS : FORWARDS,
          fromPosition: cursor,
          maxCount: ALL_PAGE,
        })) {
          read += 1;
          const recorded = resolved.event;
          if (!recorded) continue;
          last = recorded;
          if (!matchesFilter(recorded, filter)) continue;
          const stored = fromRecordedEvent(recorded, recorded.position);
          // Reads start at the position given: the port's `from` is exclusive.
          if (after !== undefined && (backwards ? stored.position >= after : stored.position <= after))
            continue;
          events.push(stored);
          if (events.length >= wanted) return events;
        }
      } catch (error) {
        throw translateEsdbError(error);
      }
      if (read < ALL_PAGE || !last) return events;
      cursor = last.position;
      after = fromEsdbPosition(last.position);
    }
  };

  /** This client cannot count on the server: pages through `$all` instead. */
  const countAll = async ({ from, limit = Number.POSITIVE_INFINITY }: { from?: Position; limit?: number } = {}) => {
    let count = 0;
    let cursor = from;
    while (count < limit) {
      const page = await readAll({ from: cursor, maxCount: ALL_PAGE });
      if (page.length === 0) break;
      count += page.length;
      cursor = page[page.length - 1]!.position;
    }
    return Math.min(count, limit);
  };

  return {
    name: 'eventstoredb',
    append,
    readStream: readStreamRaw,
    readAll,
    countAll,
    headPosition: async () => (await readAll({ direction: 'backwards', maxCount: 1 }))[0]?.position ?? START,
    subscribe: (handler, subscribeOptions) =>
      subscribeToAll(client, handler, subscribeOptions, options.retryDelayMs),
    close: () => client.dispose(),
  };
};

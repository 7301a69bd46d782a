import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamSubscription,
  type AppendStreamState,
  type CurrentStreamState,
  type Filter,
  type JSONEventData,
  type Position as EsdbPosition,
  type RecordedEvent,
} from '@kurrent/kurrentdb-client';
import { assertStorableEvent, parseStoredEvent, validateEvent, type StoredEvent } from '../../src/domain/events.js';
import { EventMetadataSchema } from '../../src/domain/metadata.js';
import { position, positionParts, type Position } from '../../src/domain/position.js';
import { PayloadTooLargeError, ValidationError, describeIssues } from '../../src/errors.js';
import {
  MAX_APPEND_BYTES,
  matchesAllFilter,
  type AllFilter,
  type FilterableEvent,
  type ExpectedRevision,
  type NewEvent,
} from '../../src/ports/eventStore.js';

/** The port's expected revision as EventStoreDB's: both count revisions from 0, so a number passes as is. */
export const toEsdbExpectedRevision = (expected: ExpectedRevision): AppendStreamState => {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return expected;
  }
};

/** A stream's actual revision as `ConcurrencyError` reports it: `no_stream` or the revision. */
export const describeCurrentRevision = (current: CurrentStreamState | undefined): string =>
  current === undefined || current === NO_STREAM ? 'no_stream' : current.toString();

export const fromEsdbPosition = ({ commit, prepare }: EsdbPosition): Position => position(commit, prepare);

export const toEsdbPosition = (p: Position): EsdbPosition => {
  const [commit, prepare] = positionParts(p);
  return { commit, prepare };
};

/** What the ledger stores in an EventStoreDB event's metadata beside its own. */
interface EsdbMetadata extends Record<string, unknown> {
  schemaVersion: number;
  $correlationId: string;
  $causationId?: string;
}

/**
 * Validates an append (catalog, metadata, distinct ids, size) the way the Postgres store does and
 * turns each event into EventStoreDB event data, keyed by the ledger's event id so that the server
 * recognises a retried append.
 */
export const toEventData = (events: readonly NewEvent[], streamId: string): JSONEventData[] => {
  if (events.length === 0) throw new TypeError('append needs at least one event');
  const data = events.map((event) => {
    const { type, schemaVersion, data: payload } = validateEvent(event);
    const parsed = EventMetadataSchema.safeParse(event.metadata);
    if (!parsed.success) {
      throw new ValidationError(`Invalid event metadata: ${describeIssues(parsed.error.issues).join('; ')}`);
    }
    const metadata = parsed.data;
    assertStorableEvent(streamId, { type, data: payload, metadata });
    const esdbMetadata: EsdbMetadata = {
      ...metadata,
      schemaVersion,
      $correlationId: metadata.correlationId,
      ...(metadata.causationId ? { $causationId: metadata.causationId } : {}),
    };
    return jsonEvent({ id: metadata.eventId, type, data: payload, metadata: esdbMetadata });
  });
  const ids = new Set(data.map((d) => d.id));
  if (ids.size !== data.length) throw new ValidationError(`Append to '${streamId}' repeats an event id`);
  const bytes = Buffer.byteLength(
    JSON.stringify(data.map(({ type, data: d, metadata }) => ({ type, d, metadata }))),
  );
  if (bytes > MAX_APPEND_BYTES) {
    throw new PayloadTooLargeError(
      `Append to '${streamId}' is ${bytes} bytes; the limit is ${MAX_APPEND_BYTES} bytes`,
      {
        streamId,
        bytes,
        limit: MAX_APPEND_BYTES,
      },
    );
  }
  return data;
};

/** Events EventStoreDB writes itself (`$statistics`, `$metadata`, links, …): never the ledger's. */
export const isSystemEvent = (recorded: Pick<RecordedEvent, 'type' | 'streamId'>): boolean =>
  recorded.type.startsWith('$') || recorded.streamId.startsWith('$');

/** A recorded EventStoreDB event as the ledger's stored event (upcast on read like any other). */
export const fromRecordedEvent = (recorded: RecordedEvent, at: EsdbPosition): StoredEvent => {
  if (!recorded.isJson)
    throw new ValidationError(`Event ${recorded.id} in '${recorded.streamId}' is not JSON`);
  const raw = (recorded.metadata ?? {}) as Partial<EsdbMetadata>;
  const metadata = EventMetadataSchema.parse(raw);
  return {
    ...parseStoredEvent(recorded.type, raw.schemaVersion ?? 1, recorded.data),
    streamId: recorded.streamId,
    revision: recorded.revision,
    position: fromEsdbPosition(at),
    metadata,
    recordedAt: recorded.created.toISOString(),
  };
};

const escapeRegex = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface FilterCallbacks {
  checkpointReached?: (subscription: AllStreamSubscription, at: EsdbPosition) => Promise<void> | void;
}

/**
 * The part of a filter the server applies to a subscription: it filters on one thing only, so event
 * types win over categories, and with neither it still drops system events. `matchesFilter` applies
 * the whole filter on this side as well.
 */
export const serverFilter = (filter: AllFilter | undefined, callbacks: FilterCallbacks = {}): Filter => {
  if (filter?.eventTypes?.length) {
    return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join('|')})$`, ...callbacks });
  }
  if (filter?.categories?.length) {
    return streamNameFilter({ prefixes: filter.categories.map((c) => `${c}-`), ...callbacks });
  }
  return excludeSystemEvents(callbacks);
};

/** Whether a recorded event belongs to the ledger and passes the port's filter. */
export const matchesFilter = (recorded: RecordedEvent, filter: AllFilter | undefined): boolean =>
  !isSystemEvent(recorded) &&
  matchesAllFilter(
    {
      streamId: recorded.streamId,
      type: recorded.type,
      // Formatted only when a time bound asks for it.
      get recordedAt() {
        return recorded.created.toISOString();
      },
      metadata: (recorded.metadata ?? {}) as FilterableEvent['metadata'],
    },
    filter,
  );

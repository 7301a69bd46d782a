import { ValidationError, PayloadTooLargeError, describeIssues } from '../../src/errors.js';
import { assertStorableEvent, categoryOf, validateEvent } from '../../src/domain/events.js';
import { EventMetadataSchema, type EventMetadata } from '../../src/domain/metadata.js';
import { MAX_APPEND_BYTES, type ExpectedRevision, type NewEvent } from '../../src/ports/eventStore.js';

const validMetadata = (metadata: unknown): EventMetadata => {
  const parsed = EventMetadataSchema.safeParse(metadata);
  if (!parsed.success) {
    throw new ValidationError(`Invalid event metadata: ${describeIssues(parsed.error.issues).join('; ')}`);
  }
  return parsed.data;
};

/** An event's columns, its data and metadata already in JSON. */
export interface PreparedEvent {
  type: string;
  schemaVersion: number;
  data: string;
  metadata: string;
  project: string;
}

/** An append checked and made ready for a store (the Postgres append statement may carry several together). */
export interface PreparedAppend {
  streamId: string;
  expected: ExpectedRevision;
  category: string;
  /** A retry of this append carries the same first event id. */
  firstEventId: string;
  events: PreparedEvent[];
  /** Its events' data and metadata in JSON, in bytes. */
  bytes: number;
}

/**
 * Checks an append: its events against the catalog (readers rely on it), and its size, so that an
 * append too large is refused before it reaches the database.
 */
export const prepareAppend = (
  streamId: string,
  events: readonly NewEvent[],
  expected: ExpectedRevision,
): PreparedAppend => {
  if (events.length === 0) throw new TypeError('append needs at least one event');
  let bytes = 0;
  const eventIds = new Set<string>();
  const prepared = events.map((event): PreparedEvent => {
    const { type, schemaVersion, data } = validateEvent(event);
    const metadata = validMetadata(event.metadata);
    assertStorableEvent(streamId, { type, data, metadata });
    if (eventIds.has(metadata.eventId)) {
      throw new ValidationError(
        `Event id '${metadata.eventId}' appears twice in one append to '${streamId}'`,
      );
    }
    eventIds.add(metadata.eventId);
    const json = { data: JSON.stringify(data), metadata: JSON.stringify(metadata) };
    bytes += Buffer.byteLength(json.data) + Buffer.byteLength(json.metadata);
    return { type, schemaVersion, ...json, project: metadata.project };
  });
  if (bytes > MAX_APPEND_BYTES) {
    throw new PayloadTooLargeError(
      `Append to '${streamId}' is ${bytes} bytes; the limit is ${MAX_APPEND_BYTES} bytes`,
      { streamId, bytes, limit: MAX_APPEND_BYTES },
    );
  }
  return {
    streamId,
    expected,
    category: categoryOf(streamId),
    firstEventId: events[0]!.metadata.eventId,
    events: prepared,
    bytes,
  };
};

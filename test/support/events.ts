import { randomUUID } from 'node:crypto';
import type { Database } from '../../infra/postgres/database.js';
import { categoryOf, validateEvent, type DomainEvent } from '../../src/domain/events.js';
import { position, type Position } from '../../src/domain/position.js';
import { EventMetadataSchema, type EventMetadata } from '../../src/domain/metadata.js';
import type { NewEvent } from '../../src/ports/eventStore.js';

/** Valid metadata with fresh ids; `overrides` win. */
export const testMetadata = (overrides: Partial<EventMetadata> = {}): EventMetadata =>
  EventMetadataSchema.parse({
    eventId: randomUUID(),
    commandId: randomUUID(),
    correlationId: randomUUID(),
    causationId: null,
    actor: { subject: 'test', tenant: null, via: 'system' },
    project: 'test',
    occurredAt: new Date().toISOString(),
    ...overrides,
  });

/** A small valid event to fill streams with when its content does not matter. */
export const sampleEvent = (): DomainEvent => ({
  type: 'IndexingJobStarted',
  schemaVersion: 1,
  data: { jobId: randomUUID(), runnerId: 'runner-1' },
});

/** Any catalog event made ready to append: validated, with metadata (fresh ids unless overridden). */
export const newEvent = (
  event: DomainEvent = sampleEvent(),
  metadata: Partial<EventMetadata> = {},
): NewEvent => ({
  ...validateEvent(event),
  metadata: testMetadata(metadata),
});

export const newEvents = (
  count: number,
  metadata: Partial<Omit<EventMetadata, 'eventId'>> = {},
): NewEvent[] => Array.from({ length: count }, () => newEvent(sampleEvent(), metadata));

/**
 * Appends past today's checks, as an older version of the ledger could have (e.g. text holding a
 * NUL); answers the event's position.
 */
export const appendUnchecked = async (
  db: Database,
  stream: string,
  event: DomainEvent,
  metadata: Partial<EventMetadata> = {},
): Promise<Position> => {
  const meta = testMetadata(metadata);
  const [row] = await db.query<{ transaction_id: string; global_position: string }>(
    `SELECT transaction_id, global_position::text FROM ledger_append($1, 'any', $2, $3::uuid, ARRAY[$4]::text[],
       ARRAY[$5::integer], ARRAY[$6::json], ARRAY[$7::json], ARRAY[$8]::text[])`,
    [stream, categoryOf(stream), meta.eventId, event.type, event.schemaVersion, JSON.stringify(event.data), JSON.stringify(meta), meta.project],
  );
  return position(row!.transaction_id, row!.global_position);
};

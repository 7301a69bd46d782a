import { randomUUID } from 'node:crypto';
import { validateEvent, type DomainEvent } from '../../src/domain/events.js';
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

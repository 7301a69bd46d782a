import { z } from 'zod';
import { ValidationError, describeIssues } from '../errors.js';
import { ANNOTATION_UPCASTERS, AnnotationEventSchemas } from './annotations.js';
import { AuthEventSchemas } from './auth.js';
import { ConnectorEventSchemas, ConnectorSyncEventSchemas } from './connectors.js';
import { DocumentEventSchemas } from './documents.js';
import { ProtectionEventSchemas } from './protection.js';
import { JobEventSchemas } from './jobs.js';
import type { Stored, UpcastersOf } from './eventEnvelope.js';
import { describeTextPath, findUnstorableText, toStorableText } from './text.js';
import { ToolEventSchemas } from './tools.js';

/** The one event catalog: every event the ledger has ever written, by `type`. */
export const DomainEventSchema = z.discriminatedUnion('type', [
  ...DocumentEventSchemas,
  ...JobEventSchemas,
  ...AnnotationEventSchemas,
  ...ConnectorEventSchemas,
  ...ConnectorSyncEventSchemas,
  ...ToolEventSchemas,
  ...AuthEventSchemas,
  ...ProtectionEventSchemas,
]);
export type DomainEvent = z.infer<typeof DomainEventSchema>;
export type EventType = DomainEvent['type'];
export type EventOfType<T extends EventType> = Extract<DomainEvent, { type: T }>;

export const EVENT_TYPES = DomainEventSchema.options.map((o) => o.shape.type.value) as readonly EventType[];

/** An event as read back from a store: the domain event plus where and when it was written. */
export type StoredEvent<E extends DomainEvent = DomainEvent> = Stored<E>;

export const STREAM_CATEGORIES = [
  'doc',
  'job',
  'annotation',
  'connector',
  'tool',
  'apikey',
  'refresh',
  'config',
  'forget',
] as const;
export type StreamCategory = (typeof STREAM_CATEGORIES)[number];

export const streamId = (category: StreamCategory, id: string): string => `${category}-${id}`;
export const categoryOf = (stream: string): string => stream.slice(0, Math.max(0, stream.indexOf('-')));

export type Upcasters = UpcastersOf<EventType>;

/** The catalog's upcasters. */
export const UPCASTERS: Upcasters = { ...ANNOTATION_UPCASTERS };

const latestVersion = (type: string): number | undefined => {
  const option = DomainEventSchema.options.find((o) => o.shape.type.value === type);
  return option?.shape.schemaVersion.value;
};

/** Validates a raw stored payload, upcasting it to the current schema version first. */
export const parseStoredEvent = (
  type: string,
  schemaVersion: number,
  data: unknown,
  upcasters: Upcasters = UPCASTERS,
): DomainEvent => {
  const latest = latestVersion(type);
  if (latest === undefined) throw new ValidationError(`Unknown event type '${type}'`);
  let version = schemaVersion;
  let payload = data as Record<string, unknown>;
  while (version < latest) {
    const lift = upcasters[type as EventType]?.[version];
    if (!lift) throw new ValidationError(`No upcaster for ${type} v${version}`);
    payload = lift(payload);
    version += 1;
  }
  return validateEvent({ type, schemaVersion: version, data: payload });
};

/**
 * Refuses, before it is appended, an event that breaks the text rule: no read model could apply it.
 * Input parsers refuse such text first, naming the input field; this guards every other writer.
 */
export const assertStorableEvent = (streamId: string, event: { type: string; data: unknown; metadata: unknown }): void => {
  const found = findUnstorableText({ streamId, data: event.data, metadata: event.metadata });
  if (found) {
    throw new ValidationError(`Cannot append ${event.type} to '${toStorableText(streamId)}': ${describeTextPath(found.path)} ${found.problem}`, {
      field: describeTextPath(found.path),
    });
  }
};

export const validateEvent = (event: unknown): DomainEvent => {
  const parsed = DomainEventSchema.safeParse(event);
  if (!parsed.success) {
    throw new ValidationError(`Invalid event: ${describeIssues(parsed.error.issues).join('; ')}`);
  }
  return parsed.data;
};

import { categoryOf, type DomainEvent, type EventType, type StoredEvent } from '../domain/events.js';
import type { EventMetadata } from '../domain/metadata.js';
import type { Position } from '../domain/position.js';

/**
 * What an append expects of its stream. `no_stream`: it must not exist; `stream_exists`: it must;
 * a bigint: its last event must be at that 0-based revision; `any`: no check.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export type NewEvent = DomainEvent & { metadata: EventMetadata };

export interface AppendResult {
  /** Revision of the last event appended (or of the original append, for a retried one). */
  nextExpectedRevision: bigint;
  position: Position;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive; defaults to the first (forwards) or the last (backwards) event. */
  fromRevision?: bigint;
  /** Inclusive bound in the direction of reading. */
  toRevision?: bigint;
  maxCount?: number;
}

/** Narrows `$all`: every field given must match. */
export interface AllFilter {
  eventTypes?: readonly EventType[];
  /** Stream categories such as `doc` or `job`. */
  categories?: readonly string[];
  project?: string;
  /** The subject of the actor whose command wrote the event. */
  actor?: string;
  commandId?: string;
  correlationId?: string;
  /** Recorded at or after this ISO 8601 time (compared to the millisecond, as events report it). */
  since?: string;
  /** Recorded at or before this ISO 8601 time. */
  until?: string;
}

/** What `matchesAllFilter` looks at; metadata is partial for events read from outside the ledger. */
export interface FilterableEvent {
  streamId: string;
  type: string;
  recordedAt: string;
  metadata: Partial<Pick<EventMetadata, 'project' | 'actor' | 'commandId' | 'correlationId'>>;
}

/** The filter's meaning, for adapters (and readers) that apply it on this side. */
export const matchesAllFilter = (event: FilterableEvent, filter: AllFilter | undefined): boolean => {
  if (!filter) return true;
  const { metadata } = event;
  const recorded = () => Date.parse(event.recordedAt);
  return (
    (!filter.eventTypes?.length || (filter.eventTypes as readonly string[]).includes(event.type)) &&
    (!filter.categories?.length || filter.categories.includes(categoryOf(event.streamId))) &&
    (filter.project === undefined || metadata.project === filter.project) &&
    (filter.actor === undefined || metadata.actor?.subject === filter.actor) &&
    (filter.commandId === undefined || metadata.commandId === filter.commandId) &&
    (filter.correlationId === undefined || metadata.correlationId === filter.correlationId) &&
    (filter.since === undefined || recorded() >= Date.parse(filter.since)) &&
    (filter.until === undefined || recorded() <= Date.parse(filter.until))
  );
};

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position (forwards) or before it (backwards). */
  from?: Position;
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
  filter?: AllFilter;
}

export interface Subscription {
  /** Resolves once the subscription has stopped and its handler is no longer running. */
  stop(): Promise<void>;
}

export interface SubscribeOptions {
  from: Position;
  filter?: AllFilter;
  batchSize?: number;
  onError?: (error: unknown) => void;
}

/** The largest append accepted, in bytes of serialised events. */
export const MAX_APPEND_BYTES = 1024 * 1024;

/**
 * The event store. Invariants every adapter keeps (checked by test/contracts/eventStore.contract.ts):
 * - an append is atomic, and checks the expected revision; a mismatch throws `ConcurrencyError`;
 * - an append whose first event id is that of an append already stored to its stream (a retry)
 *   returns the original result, writing nothing; event ids within one append must differ;
 * - `$all` is read in commit order, and a reader never skips an event committed after it looked;
 * - appends over `MAX_APPEND_BYTES` are refused with `PayloadTooLargeError`.
 */
export interface EventStore {
  readonly name: string;
  append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** Several streams whole, in one read: each stream's events in order; a stream without events is missing. */
  readStreams?(streamIds: readonly string[]): Promise<Map<string, StoredEvent[]>>;
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  /** How many events `$all` holds after `from` (all when absent), counting no further than `limit`. */
  countAll(options?: { from?: Position; limit?: number }): Promise<number>;
  /** Position of the last event in `$all` that readers can see, or `START` if none. */
  headPosition(): Promise<Position>;
  /** Catches up from `from`, then follows new events; batches are handled one at a time, in order. */
  subscribe(handler: (events: StoredEvent[]) => Promise<void>, options: SubscribeOptions): Subscription;
  /**
   * The revision a stream reached with this process's last append to it, from memory. Only a store
   * no other process writes to (the embedded one) answers, so that a cache of a stream this process
   * wrote can tell it is current without reading; undefined when unknown.
   */
  knownRevision?(streamId: string): bigint | undefined;
  close(): Promise<void>;
}

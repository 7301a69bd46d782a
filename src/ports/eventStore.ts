import type { DomainEvent, EventType, StoredEvent } from '../domain/events.js';
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

export interface AllFilter {
  eventTypes?: readonly EventType[];
  /** Stream categories such as `doc` or `job`. */
  categories?: readonly string[];
  project?: string;
}

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
 * - an append whose first event id is already stored returns the original result, writing nothing;
 * - `$all` is read in commit order, and a reader never skips an event committed after it looked;
 * - appends over `MAX_APPEND_BYTES` are refused with `PayloadTooLargeError`.
 */
export interface EventStore {
  readonly name: string;
  append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  /** Position of the last event in `$all` that readers can see, or `START` if none. */
  headPosition(): Promise<Position>;
  /** Catches up from `from`, then follows new events; batches are handled one at a time, in order. */
  subscribe(handler: (events: StoredEvent[]) => Promise<void>, options: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

import type { EventMetadata } from './metadata.js';
import type { Position } from './position.js';

/** What a store adds to an event it writes: where and when it was written. */
export interface EventEnvelope {
  streamId: string;
  /** 0-based revision within its stream. */
  revision: bigint;
  position: Position;
  metadata: EventMetadata;
  recordedAt: string;
}

/**
 * An event as read back from a store. Aggregates type their own events with it, so that they need
 * not import the catalog (`events.ts`), which imports them.
 */
export type Stored<E> = E & EventEnvelope;

/**
 * Upcasters lift a stored payload from version n to n+1, keyed by type and the version they read.
 * Stored events are never rewritten: old versions are lifted on every read.
 */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;
export type UpcastersOf<Type extends string> = Partial<Record<Type, Record<number, Upcaster>>>;

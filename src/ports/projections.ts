import type { EventType, StoredEvent } from '../domain/events.js';
import type { Position } from '../domain/position.js';

/**
 * A read model kept as one JSON document per id: pure, it only says which documents an event
 * touches and how. `evolve` returning null deletes the document.
 */
export interface DocumentProjection<Doc = unknown> {
  readonly name: string;
  /** Bump when `evolve` changes meaning: a new version is rebuilt from the first event. */
  readonly version: number;
  readonly eventTypes: readonly EventType[];
  documentIds(event: StoredEvent): readonly string[];
  /** The document `id` after `event` (one of the event's `documentIds`). */
  evolve(doc: Doc | null, event: StoredEvent, id: string): Doc | null;
}

/** Another runner moved the checkpoint first: nothing of the batch was applied. */
export class CheckpointMovedError extends Error {
  override name = 'CheckpointMovedError';
}

/**
 * An event of the batch can never be applied, however often it is retried: its data is refused by
 * the store (e.g. Postgres data exceptions) or the projection's handler throws on it. Nothing of
 * the batch was applied. Errors of a store that cannot be reached are never this.
 */
export class UnprojectableEventError extends Error {
  override name = 'UnprojectableEventError';
}

/** Runs a projection's pure handler on `event`: whatever it throws is about that event. */
export const handle = <T>(event: StoredEvent, handler: () => T): T => {
  try {
    return handler();
  } catch (error) {
    throw new UnprojectableEventError(`Cannot apply ${event.type} at ${event.position}: ${(error as Error).message}`, {
      cause: error,
    });
  }
};

/** An event a projection skipped because it could not apply it, kept so that it can be looked into. */
export interface QuarantinedEvent {
  position: Position;
  eventType: string;
  streamId: string;
  error: string;
  quarantinedAt: string;
}

/**
 * Where a projection writes. `apply` writes the batch and moves the checkpoint from `from` to `to`
 * as one unit (Postgres: one transaction; at-least-once sinks: data first, checkpoint after), and
 * throws CheckpointMovedError, applying nothing, when the stored checkpoint is not `from`; it
 * throws UnprojectableEventError when an event of the batch can never be applied.
 */
export interface ProjectionSink {
  checkpoint(): Promise<Position>;
  apply(events: readonly StoredEvent[], from: Position, to: Position): Promise<void>;
  /**
   * Records `event` as quarantined and moves the checkpoint from `from` to `to` (at or past the
   * event) as one unit, applying nothing; CheckpointMovedError as `apply`.
   */
  quarantine(event: StoredEvent, error: string, from: Position, to: Position): Promise<void>;
}

export interface ShadowSink extends ProjectionSink {
  /** Atomically replaces the live read model (and its checkpoint) with this one. */
  promote(): Promise<void>;
  discard(): Promise<void>;
}

/** A projection as the runner drives it: its live sink and a way to rebuild beside it. */
export interface RunnableProjection {
  readonly name: string;
  readonly version: number;
  readonly eventTypes: readonly EventType[];
  /**
   * True when applying a batch computes more than it writes (the semantic index embeds its chunks):
   * such a projection follows `$all` on its own, so the others are never held waiting for it.
   */
  readonly computes?: boolean;
  /**
   * True when the read model lives outside the ledger's database (Meilisearch), where each write
   * has a fixed cost far above its size: batches reach it whole, not cut into the slices that keep
   * an embedded database's one thread free for requests, on a feed of its own, so that the others
   * are not held behind its writes. Unlike one that computes, a write waits for it by default.
   */
  readonly writesElsewhere?: boolean;
  readonly live: ProjectionSink;
  /** The version the live read model was built with, or null when it was never built. */
  liveVersion(): Promise<number | null>;
  /** Opens an empty shadow copy, checkpoint at the start of `$all`; promoting it brings its quarantine. */
  openShadow(): Promise<ShadowSink>;
  /** The events the live read model quarantined, oldest first. */
  quarantined(): Promise<QuarantinedEvent[]>;
}

export interface FindQuery {
  /** Top-level fields that must equal these values. */
  where?: Record<string, string | number | boolean>;
  orderBy?: readonly { field: string; direction: 'asc' | 'desc' }[];
  limit?: number;
  offset?: number;
}

/** Of an array field of objects, the elements whose `id` is listed: the rest of a long array is not read out. */
export interface OnlyElements {
  field: string;
  ids: readonly string[];
}

/** Reads document read models for queries. */
export interface ReadModels {
  get<Doc>(collection: string, id: string): Promise<Doc | null>;
  /**
   * Several documents in one read, by id; missing ids are absent from the map. With `only`, that
   * array field of each holds just the listed elements, in their order.
   */
  getMany<Doc>(collection: string, ids: readonly string[], only?: OnlyElements): Promise<Map<string, Doc>>;
  find<Doc>(collection: string, query?: FindQuery): Promise<{ items: Doc[]; total: number }>;
  /** How many documents have each value of a top-level field. */
  count(collection: string, field: string, where?: FindQuery['where']): Promise<Map<string, number>>;
}

import type { SessionState } from '../../src/domain/annotations.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { categoryOf } from '../../src/domain/events.js';
import { jobStatusResponse } from '../../src/services/jobResponses.js';
import { sessionFold } from '../../src/domain/annotationSessionFold.js';
import { progressOfState } from '../../src/domain/annotationProgress.js';
import { documentFold, documentVersion } from '../../src/domain/documentVersion.js';
import { jobViewFold } from '../../src/domain/jobView.js';
import type { Fold, Folded } from '../../src/domain/asOf.js';

export const AGGREGATE_NAMES = ['job', 'annotation_session', 'document'] as const;
export type AggregateName = (typeof AGGREGATE_NAMES)[number];

/** A kind of aggregate: which streams hold it, how its state is folded, and how that state reads as JSON. */
export interface AggregateKind<State = unknown, Event extends DomainEvent = DomainEvent> {
  name: AggregateName;
  /** The category of its streams: `job` for `job-<id>`. */
  category: string;
  fold: Fold<State, Event>;
  /** The state as JSON (snake_case, as the REST API speaks), or null when it did not exist yet. */
  present(folded: Folded<State>, id: string): Record<string, unknown> | null;
}

const kind = <State, Event extends DomainEvent>(aggregate: AggregateKind<State, Event>) =>
  aggregate as unknown as AggregateKind;

const sessionJson = (state: SessionState): Record<string, unknown> => {
  const progress = progressOfState(state);
  return {
    session_id: state.sessionId,
    name: state.name,
    total_chunks: progress.totalChunks,
    annotated_chunks: progress.annotatedChunks,
    pending_chunks: progress.pendingChunks,
    completion_percentage: progress.completionPercentage,
    pending_chunk_ids: progress.pendingChunkIds,
    // The fields exactly as the session holds them.
    chunks: [...state.chunks.values()].map((chunk) => ({
      chunk_id: chunk.chunkId,
      position: chunk.position,
      annotated: chunk.annotated,
      ...chunk.fields,
      relations: chunk.relations,
    })),
  };
};

/** Every aggregate that can be looked at as of a past moment, by the category of its streams. */
export const AGGREGATES: readonly AggregateKind[] = [
  kind({
    name: 'job',
    category: 'job',
    fold: jobViewFold,
    present: ({ state }) => (state ? jobStatusResponse(state) : null),
  }),
  kind({
    name: 'annotation_session',
    category: 'annotation',
    fold: sessionFold,
    present: ({ state }) => (state.sessionId === null ? null : sessionJson(state)),
  }),
  kind({
    name: 'document',
    category: 'doc',
    fold: documentFold,
    present: (folded, id) => documentVersion(folded, id),
  }),
];

/** The aggregate a stream holds, if it is one of the known kinds. */
export const aggregateOf = (streamId: string): AggregateKind | undefined =>
  AGGREGATES.find((aggregate) => aggregate.category === categoryOf(streamId));

import { EVENT_TYPES, categoryOf } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

/** One row per stream: what it is, how long, and when it last changed. */
export interface StreamSummary {
  streamId: string;
  category: string;
  project: string;
  events: number;
  lastRevision: number;
  lastEventType: string;
  lastPosition: Position;
  firstRecordedAt: string;
  lastRecordedAt: string;
}

export const streamSummaries: DocumentProjection<StreamSummary> = {
  name: 'streams',
  version: 1,
  eventTypes: EVENT_TYPES,
  documentIds: (event) => [event.streamId],
  evolve: (summary, event) => ({
    streamId: event.streamId,
    category: categoryOf(event.streamId),
    project: event.metadata.project,
    events: (summary?.events ?? 0) + 1,
    lastRevision: Number(event.revision),
    lastEventType: event.type,
    lastPosition: event.position,
    firstRecordedAt: summary?.firstRecordedAt ?? event.recordedAt,
    lastRecordedAt: event.recordedAt,
  }),
};

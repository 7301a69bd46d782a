import type { AnnotationEvent } from '../../src/domain/annotations.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

/**
 * One row per session: what it is and when it last changed. Progress (which chunks are annotated)
 * comes from the session's stream, so this row stays small however large the session.
 */
export interface AnnotationSessionSummary {
  sessionId: string;
  name: string | null;
  totalChunks: number;
  receivedChunks: number;
  relations: number;
  startedAt: string;
  startedBy: string;
  lastRevision: number;
  lastPosition: Position;
  updatedAt: string;
}

export const ANNOTATION_SESSIONS = 'annotation_sessions';

export const annotationSessions: DocumentProjection<AnnotationSessionSummary> = {
  name: ANNOTATION_SESSIONS,
  version: 2,
  eventTypes: ['AnnotationSessionStarted', 'SessionChunksAdded', 'ChunkAnnotated', 'RelationAdded', 'SessionRenamed'],
  documentIds: (event) => [(event.data as { sessionId: string }).sessionId],
  evolve: (summary, stored) => {
    const event = stored as StoredEvent<AnnotationEvent>;
    const touched = {
      lastRevision: Number(event.revision),
      lastPosition: event.position,
      updatedAt: event.recordedAt,
    };
    if (event.type === 'AnnotationSessionStarted') {
      return {
        sessionId: event.data.sessionId,
        name: event.data.name,
        totalChunks: event.data.chunkCount,
        receivedChunks: 0,
        relations: 0,
        startedAt: event.recordedAt,
        startedBy: event.metadata.actor.subject,
        ...touched,
      };
    }
    if (!summary) return null;
    switch (event.type) {
      case 'SessionChunksAdded':
        return {
          ...summary,
          receivedChunks: summary.receivedChunks + event.data.chunks.length,
          ...touched,
        };
      case 'ChunkAnnotated':
        return { ...summary, ...touched };
      case 'RelationAdded':
        return { ...summary, relations: summary.relations + 1, ...touched };
      case 'SessionRenamed':
        return { ...summary, name: event.data.name, ...touched };
      default: {
        const unknown: never = event;
        return unknown;
      }
    }
  },
};

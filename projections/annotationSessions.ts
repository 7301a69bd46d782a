import type { AnnotationEvent } from '../src/domain/annotations.js';
import type { StoredEvent } from '../src/domain/events.js';
import type { Position } from '../src/domain/position.js';
import type { DocumentProjection } from '../src/ports/projections.js';

/** One row per session: its counts and the chunks still pending, in position order. */
export interface AnnotationSessionSummary {
  sessionId: string;
  name: string | null;
  totalChunks: number;
  receivedChunks: number;
  annotatedChunks: number;
  pendingChunkIds: string[];
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
  version: 1,
  eventTypes: ['AnnotationSessionStarted', 'SessionChunksAdded', 'ChunkAnnotated', 'RelationAdded'],
  documentId: (event) => (event.data as { sessionId: string }).sessionId,
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
        annotatedChunks: 0,
        pendingChunkIds: [],
        relations: 0,
        startedAt: event.recordedAt,
        startedBy: event.metadata.actor.subject,
        ...touched,
      };
    }
    if (!summary) return null;
    switch (event.type) {
      case 'SessionChunksAdded':
        // Chunks arrive in position order, so appending keeps the pending list ordered.
        return {
          ...summary,
          receivedChunks: summary.receivedChunks + event.data.chunks.length,
          pendingChunkIds: [...summary.pendingChunkIds, ...event.data.chunks.map((c) => c.chunkId)],
          ...touched,
        };
      case 'ChunkAnnotated': {
        const index = summary.pendingChunkIds.indexOf(event.data.chunkId);
        if (index < 0) return { ...summary, ...touched };
        return {
          ...summary,
          annotatedChunks: summary.annotatedChunks + 1,
          pendingChunkIds: summary.pendingChunkIds.toSpliced(index, 1),
          ...touched,
        };
      }
      case 'RelationAdded':
        return { ...summary, relations: summary.relations + 1, ...touched };
      default: {
        const unknown: never = event;
        return unknown;
      }
    }
  },
};

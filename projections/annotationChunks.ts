import {
  emptyAnnotation,
  type AnnotationEvent,
  type StoredAnnotationFields,
} from '../src/domain/annotations.js';
import type { StoredEvent } from '../src/domain/events.js';
import type { DocumentProjection } from '../src/ports/projections.js';

/**
 * One row per chunk that has been annotated or is the source of a relation; chunks never touched
 * have no row and export with empty fields.
 */
export interface AnnotationChunkRow extends StoredAnnotationFields {
  sessionId: string;
  chunkId: string;
  annotated: boolean;
  relations: Record<string, string[]>;
  updatedAt: string;
}

export const ANNOTATION_CHUNKS = 'annotation_chunks';

export const annotationChunkRowId = (sessionId: string, chunkId: string) => `${sessionId}:${chunkId}`;

const blank = (sessionId: string, chunkId: string): AnnotationChunkRow => ({
  sessionId,
  chunkId,
  annotated: false,
  ...emptyAnnotation(),
  relations: {},
  updatedAt: '',
});

export const annotationChunks: DocumentProjection<AnnotationChunkRow> = {
  name: ANNOTATION_CHUNKS,
  version: 1,
  eventTypes: ['ChunkAnnotated', 'RelationAdded'],
  documentId: (stored) => {
    const event = stored as StoredEvent<AnnotationEvent>;
    if (event.type === 'ChunkAnnotated')
      return annotationChunkRowId(event.data.sessionId, event.data.chunkId);
    if (event.type === 'RelationAdded')
      return annotationChunkRowId(event.data.sessionId, event.data.sourceChunkId);
    return null;
  },
  evolve: (row, stored) => {
    const event = stored as StoredEvent<AnnotationEvent>;
    if (event.type === 'ChunkAnnotated') {
      const current = row ?? blank(event.data.sessionId, event.data.chunkId);
      return { ...current, ...event.data.changes, annotated: true, updatedAt: event.recordedAt };
    }
    if (event.type === 'RelationAdded') {
      const current = row ?? blank(event.data.sessionId, event.data.sourceChunkId);
      const targets = current.relations[event.data.relationType] ?? [];
      if (targets.includes(event.data.targetChunkId)) return current;
      return {
        ...current,
        relations: {
          ...current.relations,
          [event.data.relationType]: [...targets, event.data.targetChunkId],
        },
        updatedAt: event.recordedAt,
      };
    }
    return row;
  },
};

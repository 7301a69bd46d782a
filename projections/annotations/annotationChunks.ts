import { emptyAnnotation, type AnnotationEvent } from '../../src/domain/annotations.js';
import { ANNOTATION_CHUNKS, type AnnotationChunkRow } from '../../src/domain/annotationChunkViews.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

export const annotationChunkRowId = (sessionId: string, chunkId: string) => `${sessionId}:${chunkId}`;

const blank = (sessionId: string, chunkId: string): AnnotationChunkRow => ({
  sessionId,
  chunkId,
  annotated: false,
  ...emptyAnnotation(),
  relations: {},
  updatedAt: '',
});

/** Row ids are `sessionId:chunkId`; the chunk's own id follows the session's, which is a uuid. */
const chunkIdOf = (rowId: string) => rowId.slice(rowId.indexOf(':') + 1);

export const annotationChunks: DocumentProjection<AnnotationChunkRow> = {
  name: ANNOTATION_CHUNKS,
  version: 1,
  eventTypes: ['ChunkAnnotated', 'RelationAdded'],
  documentIds: (stored) => {
    const event = stored as StoredEvent<AnnotationEvent>;
    if (event.type === 'ChunkAnnotated') {
      const chunkIds = new Set(event.data.annotations.map((a) => a.chunkId));
      return [...chunkIds].map((chunkId) => annotationChunkRowId(event.data.sessionId, chunkId));
    }
    if (event.type === 'RelationAdded')
      return [annotationChunkRowId(event.data.sessionId, event.data.sourceChunkId)];
    return [];
  },
  evolve: (row, stored, id) => {
    const event = stored as StoredEvent<AnnotationEvent>;
    if (event.type === 'ChunkAnnotated') {
      const chunkId = chunkIdOf(id);
      let current = row ?? blank(event.data.sessionId, chunkId);
      // In order: a chunk annotated twice by one command ends as the later annotation left it.
      for (const { chunkId: annotated, changes } of event.data.annotations) {
        if (annotated === chunkId)
          current = { ...current, ...changes, annotated: true, updatedAt: event.recordedAt };
      }
      return current;
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

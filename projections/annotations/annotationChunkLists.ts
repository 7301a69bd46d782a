import type { AnnotationEvent } from '../../src/domain/annotations.js';
import { ANNOTATION_CHUNK_LISTS, type AnnotationChunkList } from '../../src/domain/annotationChunkViews.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

export const annotationChunkLists: DocumentProjection<AnnotationChunkList> = {
  name: ANNOTATION_CHUNK_LISTS,
  version: 1,
  eventTypes: ['AnnotationSessionStarted', 'SessionChunksAdded'],
  documentIds: (event) => [(event.data as { sessionId: string }).sessionId],
  evolve: (list, stored) => {
    const event = stored as StoredEvent<AnnotationEvent>;
    if (event.type === 'AnnotationSessionStarted') return { sessionId: event.data.sessionId, chunks: [] };
    if (event.type !== 'SessionChunksAdded' || !list) return list;
    return {
      ...list,
      chunks: [...list.chunks, ...event.data.chunks.map((c): [string, number] => [c.chunkId, c.position])],
    };
  },
};

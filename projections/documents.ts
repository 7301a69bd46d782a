import type { ChunkRef, DocumentFields } from '../src/domain/documents.js';
import type { DocumentProjection } from '../src/ports/projections.js';

/** The current version of every document, as `get` and `sources` read it. */
export interface DocumentView extends DocumentFields {
  id: string;
  project: string;
  version: number;
  bodyHash: string;
  bodyBytes: number;
  chunks: ChunkRef[];
  ingestedAt: string;
  /** Set once its content was forgotten: it has no chunks, and its body is gone. */
  forgotten?: { at: string; by: string; reason: string | null };
}

export const documentsProjection: DocumentProjection<DocumentView> = {
  name: 'documents',
  version: 1,
  eventTypes: ['DocumentIngested', 'DocumentRemoved', 'DocumentForgotten'],
  documentIds: (event) => ('documentId' in event.data ? [event.data.documentId] : []),
  evolve: (doc, event) => {
    switch (event.type) {
      case 'DocumentIngested': {
        const { documentId, ...fields } = event.data;
        return {
          ...fields,
          id: documentId,
          project: event.metadata.project,
          version: (doc?.version ?? 0) + 1,
          ingestedAt: event.recordedAt,
        };
      }
      case 'DocumentRemoved':
        return null;
      case 'DocumentForgotten':
        return (
          doc && {
            ...doc,
            chunks: [],
            forgotten: { at: event.recordedAt, by: event.metadata.actor.subject, reason: event.data.reason },
          }
        );
      default:
        return doc;
    }
  },
};

import type { ChunkRef, DocumentFields } from './documents.js';
import type { StoredEvent } from './events.js';

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

/** How each document event changes the view: the documents read model and as-of search fold the same way. */
export const evolveDocumentView = (doc: DocumentView | null, event: StoredEvent): DocumentView | null => {
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
};

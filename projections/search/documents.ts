import { evolveDocumentView, type DocumentView } from '../../src/domain/documentView.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

export const documentsProjection: DocumentProjection<DocumentView> = {
  name: 'documents',
  version: 1,
  eventTypes: ['DocumentIngested', 'DocumentRemoved', 'DocumentForgotten'],
  documentIds: (event) => ('documentId' in event.data ? [event.data.documentId] : []),
  evolve: evolveDocumentView,
};

import type { StoredEvent } from './events.js';

/** A chunk as the search indexes hold it: enough to filter, rank and show a result. */
export interface SearchChunk {
  chunkId: string;
  documentId: string;
  project: string;
  source: string;
  sourceId: string;
  title: string | null;
  tags: string[];
  updatedAt: string;
  chunkIndex: number;
  textHash: string;
}

/**
 * What an event changes in a search index: the document's chunks are replaced as a whole (an
 * empty list removes them), or the event does not concern search.
 */
export const searchChunkChanges = (event: StoredEvent): { documentId: string; chunks: SearchChunk[] } | null => {
  switch (event.type) {
    case 'DocumentIngested': {
      const d = event.data;
      return {
        documentId: d.documentId,
        chunks: d.chunks.map((c) => ({
          chunkId: c.id,
          documentId: d.documentId,
          project: event.metadata.project,
          source: d.source,
          sourceId: d.sourceId,
          title: d.title,
          tags: d.tags,
          updatedAt: d.updatedAt,
          chunkIndex: c.index,
          textHash: c.textHash,
        })),
      };
    }
    case 'DocumentRemoved':
    case 'DocumentForgotten':
      return { documentId: event.data.documentId, chunks: [] };
    default:
      return null;
  }
};

export const SEARCH_EVENT_TYPES = ['DocumentIngested', 'DocumentRemoved', 'DocumentForgotten'] as const;

/** What a chunk is embedded as, and so what the embedding cache holds its vector under: title, then text. */
export const semanticPassage = (title: string | null, text: string | undefined): string =>
  [title, text].filter((part) => part).join('\n');

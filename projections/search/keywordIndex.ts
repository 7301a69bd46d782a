import { searchChunkChanges, SEARCH_EVENT_TYPES } from '../../src/domain/searchChunks.js';
import type { ChunkIndexProjection } from '../../src/ports/searchIndex.js';

/**
 * The keyword index: each document's chunks, each held with its text; how the text is analysed
 * for BM25 (the words inside compound identifiers) is the index's. Named and versioned alike
 * whichever index holds it, so `ctx projections rebuild keyword` works in either mode.
 */
export const keywordIndexProjection: ChunkIndexProjection<string> = {
  name: 'keyword',
  version: 4,
  eventTypes: SEARCH_EVENT_TYPES,
  changes: searchChunkChanges,
  index: (pending, texts) => {
    const indexed = pending.map((p) => p.chunk);
    return Promise.resolve({ indexed, values: indexed.map((c) => texts.get(c.textHash)!), setAside: [] });
  },
};

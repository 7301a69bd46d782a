import type { SearchChunk } from '../../src/domain/searchChunks.js';
import { codeAwareText } from '../../src/domain/codeTerms.js';
import { epochMs, staleChunksFilter } from './meiliFilters.js';
import { STOP_WORDS } from './meiliRanking.js';

/** A chunk as a Meilisearch document, keyed by chunk id. */
export interface MeiliChunkDocument {
  id: string;
  document_id: string;
  project: string;
  source: string;
  source_id: string;
  title: string | null;
  tags: string[];
  /** Epoch milliseconds, so that ranges filter and sort. */
  updated_at: number;
  chunk_index: number;
  text: string;
}

/** Settings every chunk index gets, live or shadow (and an existing one on its next batch). */
export const CHUNK_INDEX_SETTINGS = {
  searchableAttributes: ['title', 'text'],
  filterableAttributes: ['project', 'source', 'tags', 'updated_at', 'document_id', 'id'],
  sortableAttributes: ['updated_at'],
  displayedAttributes: ['id', 'document_id', 'source', 'title', 'text'],
  typoTolerance: { enabled: true },
  stopWords: [...STOP_WORDS],
  // Word rarity is counted from `estimatedTotalHits`, which Meilisearch stops counting at this
  // (default 1,000): past it every word of a large project would look as common as any other.
  pagination: { maxTotalHits: 100_000_000 },
  // Nothing asks for facet values; building their search index took a tenth of each addition.
  facetSearch: false,
};

/** Documents per addDocuments request, and documents per stale-chunk deletion filter. */
const ADD_BATCH = 1_000;
const DELETE_GROUP = 100;

export const toChunkDocument = (chunk: SearchChunk, text: string): MeiliChunkDocument => ({
  id: chunk.chunkId,
  document_id: chunk.documentId,
  project: chunk.project,
  source: chunk.source,
  source_id: chunk.sourceId,
  title: chunk.title,
  tags: chunk.tags,
  updated_at: epochMs(chunk.updatedAt),
  chunk_index: chunk.chunkIndex,
  // The words inside compound identifiers too, as the embedded BM25 index has them.
  text: codeAwareText(text),
});

const groups = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/**
 * How a batch of changes reaches Meilisearch with full replacements and deletes only: every chunk
 * a document now has is added whole (replacing any earlier version of it), then the chunks of
 * those documents that are no longer among them are deleted. Searches never see a document
 * without chunks in between. Chunks whose text the content store no longer has are left out.
 */
export const planReplacement = (
  changes: ReadonlyMap<string, readonly SearchChunk[]>,
  texts: ReadonlyMap<string, string>,
): { additions: MeiliChunkDocument[][]; deletions: string[] } => {
  const documents: MeiliChunkDocument[] = [];
  const kept = new Map<string, string[]>();
  for (const [documentId, chunks] of changes) {
    const ids: string[] = [];
    for (const chunk of chunks) {
      const text = texts.get(chunk.textHash);
      if (text === undefined) continue;
      documents.push(toChunkDocument(chunk, text));
      ids.push(chunk.chunkId);
    }
    kept.set(documentId, ids);
  }
  const deletions = groups([...kept.keys()], DELETE_GROUP).map((documentIds) =>
    staleChunksFilter(
      documentIds,
      documentIds.flatMap((id) => kept.get(id) ?? []),
    ),
  );
  return { additions: groups(documents, ADD_BATCH), deletions };
};

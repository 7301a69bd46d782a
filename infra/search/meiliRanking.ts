import type { ScoredChunk } from '../../src/ports/searchIndex.js';

/**
 * English words too common to rank by. The index leaves them out (settings `stopWords`) and so do
 * the per-word queries: a query of a stop word alone would match every chunk.
 */
// prettier-ignore
export const STOP_WORDS = [
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'been', 'but', 'by', 'can', 'could', 'did', 'do',
  'does', 'for', 'from', 'had', 'has', 'have', 'how', 'i', 'if', 'in', 'into', 'is', 'it', 'its',
  'may', 'more', 'no', 'not', 'of', 'on', 'or', 'our', 'should', 'so', 'such', 'than', 'that',
  'the', 'their', 'then', 'there', 'these', 'they', 'this', 'those', 'to', 'was', 'we', 'were',
  'what', 'when', 'where', 'which', 'while', 'who', 'why', 'will', 'with', 'would', 'you',
] as const;
const STOP = new Set<string>(STOP_WORDS);

/** Words a query is ranked by at most: a pasted paragraph still makes one bounded request. */
export const MAX_TERMS = 32;

/**
 * The distinct words of a query, as written (Meilisearch splits camelCase itself, so case is
 * kept), without stop words, first ones first.
 */
export const queryTerms = (query: string): string[] => {
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const word of query.split(/[^\p{L}\p{N}]+/u)) {
    const key = word.toLowerCase();
    if (!word || STOP.has(key) || seen.has(key)) continue;
    seen.add(key);
    terms.push(word);
  }
  return terms.slice(0, MAX_TERMS);
};

/** How rare a word is among `total` chunks, BM25's way: always positive, higher when rarer. */
export const inverseFrequency = (matching: number, total: number): number =>
  Math.log(1 + (Math.max(total, matching) - matching + 0.5) / (matching + 0.5));

export interface TermHits {
  /** Chunks of the project that contain the word, whatever the other filters. */
  matching: number;
  /** The best chunks that contain it, within the filters, with Meilisearch's score for the word alone (0–1). */
  hits: readonly { id: string; document_id: string; _rankingScore?: number }[];
}

/**
 * Chunks ranked by the words they contain, each word weighed by its rarity in the project and by
 * how well the chunk matches it (Meilisearch's score: typos, attribute, exactness): a chunk that
 * holds more of the rarer words ranks higher, as with BM25, and one that holds any word is found.
 * Rarity is counted over the whole project, so a filter narrows the list but changes no score.
 */
export const rankByTerms = (terms: readonly TermHits[], total: number): ScoredChunk[] => {
  const scored = new Map<string, ScoredChunk>();
  for (const { matching, hits } of terms) {
    const weight = inverseFrequency(matching, total);
    for (const hit of hits) {
      const chunk = scored.get(hit.id) ?? { chunkId: hit.id, documentId: hit.document_id, score: 0 };
      chunk.score += weight * (hit._rankingScore ?? 0);
      scored.set(hit.id, chunk);
    }
  }
  return [...scored.values()].sort((a, b) => b.score - a.score || a.chunkId.localeCompare(b.chunkId));
};

import type { ScoredChunk } from '../src/ports/searchIndex.js';

export type Fusion = 'rrf' | 'weighted' | 'keyword' | 'semantic';

/** Where a document stands in one ranking: its place among that ranking's documents, by its best chunk. */
export interface DocumentRank {
  rank: number;
  /** The best chunk's score (NaN when the index gave ranks only). */
  score: number;
  chunkId: string;
}

export interface FusedDocument {
  documentId: string;
  /** The chunk to show: the document's best chunk in the ranking that places the document highest. */
  chunkId: string;
  score: number;
  keyword: DocumentRank | null;
  semantic: DocumentRank | null;
  /** The keyword index's own excerpt of the shown chunk, when it makes one. */
  snippet: string | null;
}

/**
 * The constant of reciprocal-rank fusion. Cormack et al. chose 60 for fusing runs of 1,000
 * documents; here each ranking holds a few dozen documents (twice the page), and a document absent
 * from one of them may still rank just below its cut. With k = 60 a document both rankings put
 * around 25th would beat one that a ranking puts first and the other just misses; with k = 10 a
 * ranking's top documents keep their lead, and agreement still decides between similar ranks.
 */
export const RRF_K = 10;

/** Each document once, at the rank and with the chunk of its best chunk in `hits` (best first). */
const documentRanks = (
  hits: readonly ScoredChunk[],
): Map<string, DocumentRank & { snippet: string | null }> => {
  const byDocument = new Map<string, DocumentRank & { snippet: string | null }>();
  for (const hit of hits) {
    if (byDocument.has(hit.documentId)) continue;
    byDocument.set(hit.documentId, {
      rank: byDocument.size + 1,
      score: hit.score,
      chunkId: hit.chunkId,
      snippet: hit.snippet ?? null,
    });
  }
  return byDocument;
};

const minMax = (ranks: Iterable<DocumentRank>) => {
  const scores = [...ranks].map((r) => r.score);
  const low = Math.min(...scores);
  const span = Math.max(...scores) - low || 1;
  return (score: number) => (score - low) / span;
};

const contribution = (
  fusion: Fusion,
  kind: 'keyword' | 'semantic',
  rank: DocumentRank,
  normalise: (s: number) => number,
) => {
  if (fusion === 'rrf') return 1 / (RRF_K + rank.rank);
  if (fusion === 'weighted') return 0.5 * normalise(rank.score);
  return fusion === kind ? rank.score : 0;
};

/**
 * Merges the keyword and semantic rankings of chunks into one ranking of documents, best first.
 * Each ranking is first read as a ranking of documents (a document stands where its best chunk
 * does), so a document split into several chunks counts once per ranking. `rrf` sums
 * 1/(RRF_K + rank); `weighted` averages min-max normalised best-chunk scores; `keyword` and
 * `semantic` keep one ranking.
 */
export const fuse = (
  lists: { keyword: readonly ScoredChunk[]; semantic: readonly ScoredChunk[] },
  fusion: Fusion,
): FusedDocument[] => {
  const fused = new Map<string, FusedDocument>();
  for (const kind of ['keyword', 'semantic'] as const) {
    if (fusion === 'keyword' && kind !== 'keyword') continue;
    if (fusion === 'semantic' && kind !== 'semantic') continue;
    const ranks = documentRanks(lists[kind]);
    const normalise = minMax(ranks.values());
    for (const [documentId, { snippet, ...rank }] of ranks) {
      let document = fused.get(documentId);
      if (!document) {
        document = { documentId, chunkId: rank.chunkId, score: 0, keyword: null, semantic: null, snippet };
        fused.set(documentId, document);
      } else if (rank.rank < (document.keyword?.rank ?? Infinity) && rank.chunkId !== document.chunkId) {
        document.chunkId = rank.chunkId;
        document.snippet = snippet;
      }
      document[kind] = rank;
      document.score += contribution(fusion, kind, rank, normalise);
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
};

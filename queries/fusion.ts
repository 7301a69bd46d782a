import type { ScoredChunk } from '../src/ports/searchIndex.js';

export type Fusion = 'rrf' | 'weighted' | 'keyword' | 'semantic';

export interface FusedChunk {
  chunkId: string;
  documentId: string;
  score: number;
  keyword: { rank: number; score: number } | null;
  semantic: { rank: number; score: number } | null;
  /** The keyword index's own excerpt, when it makes one. */
  snippet: string | null;
}

/** The constant of reciprocal-rank fusion: 60, as in Cormack et al. and most search engines. */
const RRF_K = 60;

const minMax = (hits: readonly ScoredChunk[]) => {
  const scores = hits.map((h) => h.score);
  const low = Math.min(...scores);
  const span = Math.max(...scores) - low || 1;
  return (score: number) => (score - low) / span;
};

/**
 * Merges the keyword and semantic rankings of chunks into one, best first. `rrf` sums 1/(k + rank);
 * `weighted` averages min-max normalised scores; `keyword` and `semantic` keep one ranking.
 */
export const fuse = (
  lists: { keyword: readonly ScoredChunk[]; semantic: readonly ScoredChunk[] },
  fusion: Fusion,
): FusedChunk[] => {
  const byChunk = new Map<string, FusedChunk>();
  const entry = (hit: ScoredChunk) => {
    let fused = byChunk.get(hit.chunkId);
    if (!fused) {
      fused = { chunkId: hit.chunkId, documentId: hit.documentId, score: 0, keyword: null, semantic: null, snippet: null };
      byChunk.set(hit.chunkId, fused);
    }
    return fused;
  };
  for (const kind of ['keyword', 'semantic'] as const) {
    const normalise = minMax(lists[kind]);
    lists[kind].forEach((hit, index) => {
      const fused = entry(hit);
      fused[kind] = { rank: index + 1, score: hit.score };
      fused.snippet ??= hit.snippet ?? null;
      if (fusion === 'rrf') fused.score += 1 / (RRF_K + index + 1);
      else if (fusion === 'weighted') fused.score += 0.5 * normalise(hit.score);
      else if (fusion === kind) fused.score = hit.score;
    });
  }
  return [...byChunk.values()].sort((a, b) => b.score - a.score);
};

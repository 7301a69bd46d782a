import type { ScoredChunk } from '../../src/ports/searchIndex.js';

export type Fusion = 'adaptive' | 'rrf' | 'weighted' | 'keyword' | 'semantic';

/** Where a document stands in one ranking: its place among that ranking's documents, by its best chunk. */
export interface DocumentRank {
  rank: number;
  /** The best chunk's score (NaN when the index gave ranks only). */
  score: number;
  chunkId: string;
  /** What this ranking added to the document's fused score. */
  contribution: number;
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
type FoundRank = Omit<DocumentRank, 'contribution'> & { snippet: string | null };

const documentRanks = (hits: readonly ScoredChunk[]): Map<string, FoundRank> => {
  const byDocument = new Map<string, FoundRank>();
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

/**
 * How far a ranking's first document stands out from the rest of its first ten, in standard
 * deviations of its scores: a ranking sure of its answer puts it well ahead, an unsure one ranks a
 * plateau. Measured on both rankings of a query, it says which to trust more for that query.
 */
const confidence = (ranks: readonly Pick<DocumentRank, 'score'>[]): number => {
  const scores = ranks.map((r) => r.score);
  if (scores.length < 2) return 0;
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const spread = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length);
  if (spread === 0) return 0;
  const top10 = scores.slice(0, 10);
  return (scores[0]! - top10.reduce((a, b) => a + b, 0) / top10.length) / spread;
};

/**
 * The tunable constants of fusion. `prior` is the semantic ranking's share of an adaptive fusion
 * before either ranking's confidence moves it, within `range`; `rrfK` is reciprocal-rank fusion's
 * constant. The defaults are chosen with `npm run eval -- --all --loo` (leave one corpus out).
 */
export interface FusionSettings {
  prior: number;
  range: readonly [number, number];
  rrfK: number;
}

export const DEFAULT_FUSION_SETTINGS: FusionSettings = { prior: 0.7, range: [0.3, 0.9], rrfK: RRF_K };

/** The semantic ranking's share of an adaptive fusion: its prior, moved toward the surer ranking. */
export const semanticShare = (
  keyword: readonly Pick<DocumentRank, 'score'>[],
  semantic: readonly Pick<DocumentRank, 'score'>[],
  settings: FusionSettings = DEFAULT_FUSION_SETTINGS,
): number => {
  if (keyword.length === 0) return 1;
  if (semantic.length === 0) return 0;
  const k = confidence(keyword);
  const s = confidence(semantic);
  const sure = k + s > 0 ? s / (k + s) : 0.5;
  const share = settings.prior + (sure - 0.5);
  return Math.min(settings.range[1], Math.max(settings.range[0], share));
};

const minMax = (ranks: Iterable<Pick<DocumentRank, 'score'>>) => {
  const scores = [...ranks].map((r) => r.score);
  const low = Math.min(...scores);
  const span = Math.max(...scores) - low || 1;
  return (score: number) => (score - low) / span;
};

const contribution = (
  fusion: Fusion,
  kind: 'keyword' | 'semantic',
  rank: Omit<DocumentRank, 'contribution'>,
  normalise: (s: number) => number,
  share: number,
  rrfK: number,
) => {
  if (fusion === 'rrf') return 1 / (rrfK + rank.rank);
  if (fusion === 'weighted') return 0.5 * normalise(rank.score);
  if (fusion === 'adaptive') return (kind === 'semantic' ? share : 1 - share) * normalise(rank.score);
  return fusion === kind ? rank.score : 0;
};

export interface ChunkRankings {
  keyword: readonly ScoredChunk[];
  semantic: readonly ScoredChunk[];
}

/** The semantic ranking's share of an adaptive fusion of these rankings (see `semanticShare`). */
export const adaptiveShare = (lists: ChunkRankings, settings: FusionSettings = DEFAULT_FUSION_SETTINGS): number =>
  semanticShare([...documentRanks(lists.keyword).values()], [...documentRanks(lists.semantic).values()], settings);

/** Documents whose chunks refine the semantic query, and the weight of their mean vector. */
export const FEEDBACK_DOCUMENTS = 3;
export const FEEDBACK_WEIGHT = 0.5;

/**
 * The chunks to refine the semantic query with, or null: when both rankings put the same document
 * first, that agreement makes the first fused documents likely answers, and the query vector is
 * moved toward their chunks (those semantic search found, else the ones shown). Measured with
 * `npm run eval` (nDCG@10): SciFact 0.7439 → 0.7508, code (cosqa-dev) 0.5903 → 0.5877. Refining
 * every query instead, whatever the rankings said, lost code search 0.01–0.02 (offline, over the
 * dumped rankings).
 */
export const feedbackChunks = (fused: readonly FusedDocument[]): string[] | null => {
  const first = fused[0];
  if (first?.keyword?.rank !== 1 || first.semantic?.rank !== 1) return null;
  return fused.slice(0, FEEDBACK_DOCUMENTS).map((document) => document.semantic?.chunkId ?? document.chunkId);
};

/**
 * Merges the keyword and semantic rankings of chunks into one ranking of documents, best first.
 * Each ranking is first read as a ranking of documents (a document stands where its best chunk
 * does), so a document split into several chunks counts once per ranking. `adaptive` weighs
 * min-max normalised best-chunk scores, giving the semantic ranking a share set per query by how
 * sure each ranking is of its first document (see `semanticShare`); `rrf` sums 1/(RRF_K + rank);
 * `weighted` averages min-max normalised best-chunk scores; `keyword` and `semantic` keep one
 * ranking. `options.share`, when given, sets the adaptive share rather than these rankings;
 * `options.settings` replaces the default constants (see `FusionSettings`).
 */
export const fuse = (
  lists: ChunkRankings,
  fusion: Fusion,
  options: { share?: number; settings?: FusionSettings } = {},
): FusedDocument[] => {
  const settings = options.settings ?? DEFAULT_FUSION_SETTINGS;
  const fused = new Map<string, FusedDocument>();
  const rankings = { keyword: documentRanks(lists.keyword), semantic: documentRanks(lists.semantic) };
  const share =
    fusion === 'adaptive'
      ? (options.share ?? semanticShare([...rankings.keyword.values()], [...rankings.semantic.values()], settings))
      : 0.5;
  for (const kind of ['keyword', 'semantic'] as const) {
    if (fusion === 'keyword' && kind !== 'keyword') continue;
    if (fusion === 'semantic' && kind !== 'semantic') continue;
    const ranks = rankings[kind];
    const normalise = minMax(ranks.values());
    for (const [documentId, { snippet, ...found }] of ranks) {
      const rank = { ...found, contribution: contribution(fusion, kind, found, normalise, share, settings.rrfK) };
      let document = fused.get(documentId);
      if (!document) {
        document = { documentId, chunkId: rank.chunkId, score: 0, keyword: null, semantic: null, snippet };
        fused.set(documentId, document);
      } else if (rank.rank < (document.keyword?.rank ?? Infinity) && rank.chunkId !== document.chunkId) {
        document.chunkId = rank.chunkId;
        document.snippet = snippet;
      }
      document[kind] = rank;
      document.score += rank.contribution;
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
};

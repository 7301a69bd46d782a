/** Filters every index applies before ranking. */
export interface SearchFilters {
  project: string;
  source?: string;
  tags?: readonly string[];
  /** Documents updated at or after / at or before (ISO 8601). */
  since?: string;
  until?: string;
}

export interface ScoredChunk {
  chunkId: string;
  documentId: string;
  /** Higher is better; comparable only within one index's answer. */
  score: number;
  /** The index's own excerpt of the chunk around the matches (highlighted, typos included), if it makes one. */
  snippet?: string | null;
}

/** Full-text ranking (BM25) over chunk texts. */
export interface KeywordIndex {
  search(query: string, filters: SearchFilters, limit: number): Promise<ScoredChunk[]>;
  /**
   * The documents with a chunk matching the query's terms under the filters (an index may bound how
   * many chunks it looks at, best first): how many per source, and which of `among` are some of
   * them. Absent where the index cannot count.
   */
  countDocuments?(query: string, filters: SearchFilters, among: readonly string[]): Promise<DocumentCount>;
}

export interface DocumentCount {
  bySource: Map<string, number>;
  among: Set<string>;
}

/** Chunks whose vectors pull a query toward them (pseudo-relevance feedback). */
export interface VectorFeedback {
  chunkIds: readonly string[];
  /** The mean of their vectors is added to the query's at this weight (both of unit length). */
  weight: number;
}

/** Nearest chunks by embedding (cosine similarity). */
export interface VectorIndex {
  search(vector: Float32Array, filters: SearchFilters, limit: number): Promise<ScoredChunk[]>;
  /**
   * The chunks among `chunkIds`, nearest first to `vector` moved toward the feedback chunks: a
   * query refined by its first answers ranks again the candidates already found.
   */
  rerank(vector: Float32Array, chunkIds: readonly string[], feedback: VectorFeedback): Promise<ScoredChunk[]>;
}

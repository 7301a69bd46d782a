/**
 * What a text is embedded as. Asymmetric models (bge, e5) embed a search query with an instruction
 * prefix and a passage without one; symmetric models treat both alike.
 */
export type EmbeddingKind = 'query' | 'document';

/**
 * Turns texts into dense vectors. Invariants every adapter keeps:
 * - `embed` returns one vector per text, in input order, each of length `dimensions`;
 * - vectors are L2-normalised, so cosine similarity is their dot product;
 * - the same (text, kind) gives the same vector for the same `model` (batch padding may move an
 *   int8 model by a hair: cosine above 0.99);
 * - a backend that cannot be reached (down, timing out, 5xx) throws `UnavailableError`, so callers
 *   can hold the work and retry; input the backend rejects throws `ValidationError`;
 * - `embed([])` resolves to `[]` without touching the backend.
 */
export interface Embedder {
  /** Names the vector space: vectors of different models must never be compared or cached together. */
  readonly model: string;
  readonly dimensions: number;
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/**
 * Vectors already computed, keyed by (model, sha256 of the text as hex). `get` returns only the
 * hashes it holds; putting an entry it already holds is harmless (the vector is the same).
 */
export interface EmbeddingCache {
  get(model: string, contentHashes: readonly string[]): Promise<Map<string, Float32Array>>;
  put(model: string, entries: ReadonlyMap<string, Float32Array>): Promise<void>;
}

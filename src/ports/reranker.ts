/**
 * Scores (query, passage) pairs with a cross-encoder, to reorder the first results of a search.
 * Invariants every adapter keeps:
 * - `score` returns one number per text, in input order; higher means more relevant;
 * - a backend that cannot be reached, times out or answers with an error throws `UnavailableError`,
 *   so search can answer in its own order instead;
 * - `score(query, [])` resolves to `[]` without touching the backend.
 */
export interface Reranker {
  /** The cross-encoder's name, for notices and logs. */
  readonly model: string;
  score(query: string, texts: readonly string[]): Promise<number[]>;
}

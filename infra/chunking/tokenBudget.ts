/**
 * Tokens are estimated as characters / 4. It needs no tokenizer, treats code and prose alike (a
 * words × 1.3 estimate undercounts punctuation-dense code), and for English prose it errs slightly
 * high, which keeps chunks inside real embedder limits.
 */
export const CHARS_PER_TOKEN = 4;

export const estimateTokens = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

export interface ChunkBudget {
  /** Upper bound on a chunk's estimated tokens; a single symbol or paragraph over it is split. */
  readonly maxTokens: number;
  /** Estimated tokens that consecutive windows of one oversized unit share. */
  readonly overlapTokens: number;
}

/** About 1,600 characters: a whole abstract or section, still inside the 512-token window of common embedders. */
export const DEFAULT_BUDGET: ChunkBudget = { maxTokens: 400, overlapTokens: 40 };

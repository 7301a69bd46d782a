import type { EmbeddingKind } from '../../src/ports/embedder.js';

/** Scales `values` to unit L2 length; an all-zero vector stays zero rather than becoming NaN. */
export const l2Normalise = (values: ArrayLike<number>): Float32Array => {
  const vector = Float32Array.from(values);
  let sumOfSquares = 0;
  for (const x of vector) sumOfSquares += x * x;
  const norm = Math.sqrt(sumOfSquares);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
};

/** Consecutive slices of at most `size` items. */
export const inBatches = <T>(items: readonly T[], size: number): T[][] => {
  const batches: T[][] = [];
  for (let start = 0; start < items.length; start += size) batches.push(items.slice(start, start + size));
  return batches;
};

/**
 * Indexes of `lengths` grouped for forward passes: shortest first, each group at most `maxCount`
 * long and, padded to its longest member, at most `maxPaddedLength` (a lone longer item goes alone).
 */
export const lengthBatches = (lengths: readonly number[], maxCount: number, maxPaddedLength: number): number[][] => {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]!);
  const batches: number[][] = [];
  let batch: number[] = [];
  for (const index of order) {
    if (batch.length > 0 && (batch.length >= maxCount || (batch.length + 1) * lengths[index]! > maxPaddedLength)) {
      batches.push(batch);
      batch = [];
    }
    batch.push(index);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
};

export interface InstructionPrefixes {
  /** Put before a search query (bge: `Represent this sentence for searching relevant passages: `). */
  queryPrefix?: string;
  /** Put before a passage (nomic-embed-text: `search_document: `). */
  documentPrefix?: string;
}

/** The texts as the model must see them for this kind of embedding. */
export const withInstructionPrefix = (
  texts: readonly string[],
  kind: EmbeddingKind,
  { queryPrefix = '', documentPrefix = '' }: InstructionPrefixes,
): string[] => {
  const prefix = kind === 'query' ? queryPrefix : documentPrefix;
  return prefix ? texts.map((text) => prefix + text) : [...texts];
};

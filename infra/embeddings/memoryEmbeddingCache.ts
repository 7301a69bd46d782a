import { ValidationError } from '../../src/errors.js';
import type { EmbeddingCache } from '../../src/ports/embedder.js';

/** An in-process cache that forgets the least recently used vectors beyond `maxEntries`. */
export const createMemoryEmbeddingCache = ({
  maxEntries = 10_000,
}: { maxEntries?: number } = {}): EmbeddingCache => {
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new ValidationError('maxEntries must be a positive integer');
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Float32Array>();
  const keyOf = (model: string, hash: string) => `${model}\u0000${hash}`;

  return {
    get(model, contentHashes) {
      const found = new Map<string, Float32Array>();
      for (const hash of contentHashes) {
        const key = keyOf(model, hash);
        const vector = entries.get(key);
        if (vector === undefined) continue;
        entries.delete(key);
        entries.set(key, vector);
        found.set(hash, vector);
      }
      return Promise.resolve(found);
    },
    put(model, newEntries) {
      for (const [hash, vector] of newEntries) {
        const key = keyOf(model, hash);
        entries.delete(key);
        entries.set(key, vector);
      }
      for (const key of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(key);
      }
      return Promise.resolve();
    },
  };
};

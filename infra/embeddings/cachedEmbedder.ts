import { contentHash } from '../../src/domain/ids.js';
import type { Embedder, EmbeddingCache, EmbeddingKind } from '../../src/ports/embedder.js';
import { trackEmbedding } from './embeddingActivity.js';
import { createMemoryEmbeddingCache } from './memoryEmbeddingCache.js';

/** The cache key of a text: sha256 of its UTF-8 bytes, as hex. */
export { contentHash };

/**
 * Documents are cached under the model's name, so a chunk's content hash finds its vector; queries
 * under a name of their own, since models with a query instruction embed them differently.
 */
const cacheSpace = (model: string, kind: EmbeddingKind): string =>
  kind === 'document' ? model : `${model}#query`;

/**
 * Texts embedded per call to the model, each call's vectors cached before the next: work that stops
 * half-way (a shutdown, an outage) keeps what it computed, and its retry embeds only the rest.
 */
export const EMBEDDING_SLICE = 128;

/** Search queries remembered in memory: a repeated query is embedded once. */
const QUERY_CACHE_ENTRIES = 1_000;

/**
 * Answers from a cache what it holds and embeds only the rest, each distinct text once, in slices
 * whose vectors are put in the cache as each one is done. Passages go to `documents` (kept across
 * restarts); queries to `queries`, in memory by default: a search must not wait for the database to
 * look its query up while indexing writes to it.
 */
export const withEmbeddingCache = (
  embedder: Embedder,
  documents: EmbeddingCache,
  queries: EmbeddingCache = createMemoryEmbeddingCache({ maxEntries: QUERY_CACHE_ENTRIES }),
): Embedder => ({
  model: embedder.model,
  dimensions: embedder.dimensions,
  async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const space = cacheSpace(embedder.model, kind);
    const cache = kind === 'document' ? documents : queries;
    const hashes = texts.map(contentHash);
    const found = await cache.get(space, [...new Set(hashes)]);

    const missing = new Map<string, string>();
    hashes.forEach((hash, i) => {
      if (!found.has(hash)) missing.set(hash, texts[i]!);
    });
    const pending = [...missing];
    await trackEmbedding(pending.length, async () => {
      for (let start = 0; start < pending.length; start += EMBEDDING_SLICE) {
        const slice = pending.slice(start, start + EMBEDDING_SLICE);
        const vectors = await embedder.embed(slice.map(([, text]) => text), kind);
        const fresh = new Map(slice.map(([hash], i) => [hash, vectors[i]!]));
        await cache.put(space, fresh);
        for (const [hash, vector] of fresh) found.set(hash, vector);
      }
    });
    return hashes.map((hash) => found.get(hash)!);
  },
  close: () => embedder.close(),
});

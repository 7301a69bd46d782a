import type { Logger } from 'pino';
import { withEmbeddingCache } from '../../infra/embeddings/cachedEmbedder.js';
import { createHttpEmbedder } from '../../infra/embeddings/httpEmbedder.js';
import { createLocalEmbedder } from '../../infra/embeddings/localEmbedder.js';
import { createPostgresEmbeddingCache } from '../../infra/embeddings/postgresEmbeddingCache.js';
import type { Database } from '../../infra/postgres/database.js';
import type { Config } from '../config.js';
import type { Embedder } from '../ports/embedder.js';

/**
 * The configured embedder behind the embedding cache, or why there is none: semantic and hybrid
 * search then answer `embeddings_disabled`, and keyword search goes on working.
 */
export const embedderFromConfig = async (
  { embeddings }: Config,
  db: Database,
  logger: Logger,
): Promise<Embedder | { disabled: string }> => {
  if (embeddings.provider === 'none') return { disabled: 'the embeddings provider is "none"' };
  try {
    const embedder =
      embeddings.provider === 'local'
        ? await createLocalEmbedder({
            model: embeddings.model,
            modelDir: embeddings.modelDir,
            batchSize: embeddings.batchSize,
          })
        : await createHttpEmbedder({
            url: embeddings.url!,
            model: embeddings.model,
            api: embeddings.api,
            apiKey: embeddings.apiKey,
            dimensions: embeddings.dimensions,
            batchSize: embeddings.batchSize,
          });
    return withEmbeddingCache(embedder, await createPostgresEmbeddingCache(db));
  } catch (error) {
    const reason = `embedding model '${embeddings.model}' could not be loaded (${(error as Error).message})`;
    logger.warn(`semantic search disabled: ${reason}`);
    return { disabled: reason };
  }
};

import path from 'node:path';
import { withEmbeddingCache } from '../../infra/embeddings/cachedEmbedder.js';
import { createHttpEmbedder } from '../../infra/embeddings/httpEmbedder.js';
import { createWorkerEmbedder } from '../../infra/embeddings/workerEmbedder.js';
import { createPostgresEmbeddingCache } from '../../infra/embeddings/postgresEmbeddingCache.js';
import type { Database } from '../../infra/postgres/database.js';
import type { Config } from '../config.js';
import type { Embedder } from '../ports/embedder.js';

/** What makes semantic search work, said wherever it does not. */
export const LOCAL_MODEL_FIX =
  'run `ctx model fetch`, or set embeddings.model_dir / CTX_EMBEDDINGS__MODEL_DIR, or embeddings.provider = "none"';

const causeOf = (error: unknown): string => {
  const message = (error as Error).message;
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && !message.includes(cause.message) ? `${message}: ${cause.message}` : message;
};

/** Why semantic search is off, with the cause and what to do about it. */
export const disabledReason = ({ embeddings }: Config, error?: unknown): string => {
  if (embeddings.provider === 'none')
    return 'the embeddings provider is "none" (set embeddings.provider = "local" and run `ctx model fetch`)';
  if (embeddings.provider === 'http')
    return (
      `the embedding server at ${embeddings.url} could not be used (${causeOf(error)}); start it, ` +
      'or set embeddings.url, or embeddings.provider = "none"'
    );
  return `embedding model '${embeddings.model}' could not be loaded (${causeOf(error)}); ${LOCAL_MODEL_FIX}`;
};

/** The active embedder in a few words, for the start-up log. */
export const describeEmbedder = ({ embeddings }: Config, embedder: Embedder): string => {
  if (embeddings.provider === 'http') return `${embeddings.model} through ${embeddings.url} (${embedder.dimensions}-d)`;
  const [model, dtype = 'fp32'] = embedder.model.split('@');
  return `${model} (${dtype} weights, ${embedder.dimensions}-d) from ${path.join(embeddings.modelDir, embeddings.model)}`;
};

/** The configured local model in its worker, with no cache in front of it. */
export const localEmbedderFromConfig = ({ embeddings }: Config): Promise<Embedder> =>
  createWorkerEmbedder({
    model: embeddings.model,
    modelDir: embeddings.modelDir,
    batchSize: embeddings.batchSize,
    ...(embeddings.weights === 'auto' ? {} : { dtype: embeddings.weights }),
    ...(embeddings.threads ? { intraOpThreads: embeddings.threads } : {}),
  });

/** The configured embedder behind the embedding cache; throws when it cannot be made now. */
export const embedderFromConfig = async (config: Config, db: Database): Promise<Embedder> => {
  const { embeddings } = config;
  const embedder =
    embeddings.provider === 'local'
      ? await localEmbedderFromConfig(config)
      : await createHttpEmbedder({
          url: embeddings.url!,
          model: embeddings.model,
          api: embeddings.api,
          apiKey: embeddings.apiKey,
          dimensions: embeddings.dimensions,
          batchSize: embeddings.batchSize,
        });
  return withEmbeddingCache(embedder, await createPostgresEmbeddingCache(db));
};

import type { Embedder, EmbeddingKind } from '../../src/ports/embedder.js';
import { openWorkerRpc, type WorkerRpc } from '../workers/workerRpc.js';
import { embeddingActivity } from './embeddingActivity.js';
import type { LocalEmbedderOptions } from './localEmbedder.js';

type Lane = WorkerRpc<{ texts: readonly string[]; kind: EmbeddingKind }, Float32Array[], { model: string; dimensions: number }>;

const openLane = (options: LocalEmbedderOptions): Lane => openWorkerRpc(new URL('./embedderWorker', import.meta.url), options);

/**
 * The local model run in worker threads, so that tokenizing and running it never holds the event
 * loop that answers requests. Documents and queries have a thread each: a search embeds its query
 * without waiting behind a batch of passages being indexed. The query thread starts on first use.
 */
export const createWorkerEmbedder = async (options: LocalEmbedderOptions): Promise<Embedder> => {
  let documents: Lane | undefined = openLane(options);
  let queries: Lane | undefined;
  const { model, dimensions } = await documents.ready.catch(async (error: unknown) => {
    await documents?.close();
    throw error;
  });
  /** A lane whose thread ended is started again on the next call. */
  const lane = (kind: EmbeddingKind): Lane => {
    if (documents && !documents.alive()) documents = undefined;
    if (queries && !queries.alive()) queries = undefined;
    if (kind === 'document') return (documents ??= openLane(options));
    return (queries ??= openLane({ ...options, intraOpThreads: 1 }));
  };
  return {
    model,
    dimensions,
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      const vectors = await lane(kind).call({ texts, kind });
      embeddingActivity.vectorsMade += vectors.length;
      return vectors;
    },
    async close() {
      await Promise.all([documents?.close(), queries?.close()]);
      documents = queries = undefined;
    },
  };
};

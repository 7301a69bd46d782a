import { UnavailableError } from '../../src/errors.js';
import type { Embedder, EmbeddingKind } from '../../src/ports/embedder.js';
import { openWorkerRpc, type WorkerRpc } from '../workers/workerRpc.js';
import { embeddingActivity } from './embeddingActivity.js';
import type { EmbedderWorkerData } from './embedderWorker.js';
import { localModelOf, type LocalEmbedderOptions } from './localEmbedder.js';

type Lane = WorkerRpc<{ texts: readonly string[]; kind: EmbeddingKind }, Float32Array[], { model: string; dimensions: number }>;

const openLane = (data: EmbedderWorkerData): Lane => openWorkerRpc(new URL('./embedderWorker', import.meta.url), data);

/** Indexing's nice value: the scheduler then gives a busy core to requests and queries first. */
const DOCUMENT_LANE_NICENESS = 10;

/**
 * The local model run in worker threads, so that tokenizing and running it never holds the event
 * loop that answers requests. Documents and queries have a thread each: a search embeds its query
 * without waiting behind a batch of passages being indexed, and the documents' thread runs at a
 * lower priority than every other. The model's folder is read here; each thread starts on its
 * first use, so a process that embeds nothing starts none.
 */
export const createWorkerEmbedder = async (options: LocalEmbedderOptions): Promise<Embedder> => {
  const { model, dimensions } = await localModelOf(options);
  let documents: Lane | undefined;
  let queries: Lane | undefined;
  let closed = false;
  /** A lane whose thread ended is started again on the next call. */
  const lane = (kind: EmbeddingKind): Lane => {
    if (closed) throw new UnavailableError('The embedder is closed');
    if (documents && !documents.alive()) documents = undefined;
    if (queries && !queries.alive()) queries = undefined;
    if (kind === 'document') return (documents ??= openLane({ embedder: options, niceness: DOCUMENT_LANE_NICENESS }));
    return (queries ??= openLane({ embedder: { ...options, intraOpThreads: 1 }, niceness: 0 }));
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
      closed = true;
      await Promise.all([documents?.close(), queries?.close()]);
      documents = queries = undefined;
    },
  };
};

import { setPriority } from 'node:os';
import type { EmbeddingKind } from '../../src/ports/embedder.js';
import { serveWorkerRpc } from '../workers/workerRpc.js';
import { createLocalEmbedder, type LocalEmbedderOptions } from './localEmbedder.js';

/** What a lane's thread is started with. */
export interface EmbedderWorkerData {
  embedder: LocalEmbedderOptions;
  /**
   * The thread's nice value, taken before ONNX Runtime starts its own threads, which inherit it
   * (Linux sets it per thread). Indexing runs niced, so a busy model never slows the threads that
   * answer requests and embed queries.
   */
  niceness: number;
}

/**
 * The thread of the worker embedder: it runs the model, tokenization and ONNX Runtime alike, so
 * that the thread answering requests never does.
 */
await serveWorkerRpc(
  async (data) => {
    const { embedder: options, niceness } = data as EmbedderWorkerData;
    if (niceness !== 0) {
      try {
        setPriority(0, niceness);
      } catch {
        // Not permitted here: the lane runs at the usual priority.
      }
    }
    const embedder = await createLocalEmbedder(options);
    return { state: embedder, info: { model: embedder.model, dimensions: embedder.dimensions } };
  },
  // A thread asked to close ends its call after the pass the model is running: a stop never waits for a whole slice.
  (embedder, { texts, kind }: { texts: readonly string[]; kind: EmbeddingKind }, stopping) => embedder.embed(texts, kind, stopping),
  (vectors) => vectors.map((v) => v.buffer as ArrayBuffer),
  (embedder) => embedder.close(),
);

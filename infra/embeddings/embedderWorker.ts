import type { EmbeddingKind } from '../../src/ports/embedder.js';
import { serveWorkerRpc } from '../workers/workerRpc.js';
import { createLocalEmbedder, type LocalEmbedderOptions } from './localEmbedder.js';

/**
 * The thread of the worker embedder: it runs the model, tokenization and ONNX Runtime alike, so
 * that the thread answering requests never does.
 */
await serveWorkerRpc(
  async (options) => {
    const embedder = await createLocalEmbedder(options as LocalEmbedderOptions);
    return { state: embedder, info: { model: embedder.model, dimensions: embedder.dimensions } };
  },
  (embedder, { texts, kind }: { texts: readonly string[]; kind: EmbeddingKind }) => embedder.embed(texts, kind),
  (vectors) => vectors.map((v) => v.buffer as ArrayBuffer),
  (embedder) => embedder.close(),
);

import { serveWorkerRpc } from '../workers/workerRpc.js';
import { loadCrossEncoder, type CrossEncoderOptions } from './crossEncoder.js';

/** The local reranker's thread: tokenizing and running the cross-encoder never hold the thread answering requests. */
await serveWorkerRpc(
  async (data) => ({ state: await loadCrossEncoder(data as CrossEncoderOptions), info: {} }),
  (encoder, { query, texts }: { query: string; texts: readonly string[] }) => encoder.score(query, texts),
  () => [],
  (encoder) => encoder.close(),
);

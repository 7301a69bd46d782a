import { parentPort, workerData } from 'node:worker_threads';
import { createLocalEmbedder, type LocalEmbedderOptions } from './localEmbedder.js';
import type { WorkerReply, WorkerRequest } from './workerEmbedder.js';

/**
 * The worker-thread side of the worker embedder: it runs the model (tokenization and ONNX Runtime
 * alike) so that the thread answering requests never does, and answers one request at a time.
 * The parent ends it by terminating the thread.
 */
const port = parentPort!;
const errorOf = (error: unknown) => ({ name: (error as Error).name, message: (error as Error).message });

try {
  const embedder = await createLocalEmbedder(workerData as LocalEmbedderOptions);
  port.postMessage({ type: 'ready', model: embedder.model, dimensions: embedder.dimensions } satisfies WorkerReply);
  let queue = Promise.resolve();
  port.on('message', (request: WorkerRequest) => {
    queue = queue.then(async () => {
      try {
        const vectors = await embedder.embed(request.texts, request.kind);
        port.postMessage({ type: 'vectors', id: request.id, vectors } satisfies WorkerReply, vectors.map((v) => v.buffer as ArrayBuffer));
      } catch (error) {
        port.postMessage({ type: 'error', id: request.id, error: errorOf(error) } satisfies WorkerReply);
      }
    });
  });
} catch (error) {
  port.postMessage({ type: 'failed', error: errorOf(error) } satisfies WorkerReply);
}

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UnavailableError, ValidationError } from '../../src/errors.js';
import type { Embedder, EmbeddingKind } from '../../src/ports/embedder.js';
import { embeddingActivity } from './embeddingActivity.js';
import type { LocalEmbedderOptions } from './localEmbedder.js';

export type WorkerRequest = { type: 'embed'; id: number; texts: readonly string[]; kind: EmbeddingKind };
type WorkerError = { name: string; message: string };
export type WorkerReply =
  | { type: 'ready'; model: string; dimensions: number }
  | { type: 'failed'; error: WorkerError }
  | { type: 'vectors'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; error: WorkerError };

/** The worker's own errors, as the port promises them: bad input is a ValidationError, the rest UnavailableError. */
const rethrown = ({ name, message }: WorkerError): Error =>
  name === 'ValidationError' ? new ValidationError(message) : new UnavailableError(message);

/**
 * Starts embedderWorker in a thread: from the built .js directly; from source (tests, tsx) through
 * tsx's loader, since a worker's entry does not go through the parent's.
 */
const spawn = (options: LocalEmbedderOptions): Worker => {
  if (import.meta.url.endsWith('.js')) return new Worker(new URL('./embedderWorker.js', import.meta.url), { workerData: options });
  // tsx's ESM build of its API: the CommonJS one cannot register its loader inside a worker.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL('./embedderWorker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => api.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`;
  return new Worker(boot, { eval: true, workerData: options });
};

interface Lane {
  alive(): boolean;
  ready: Promise<{ model: string; dimensions: number }>;
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** One worker thread running the model; requests are answered in order. */
const openLane = (options: LocalEmbedderOptions): Lane => {
  const worker = spawn(options);
  worker.unref();
  const pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let ended: Error | undefined;
  let settleReady: { resolve: (v: { model: string; dimensions: number }) => void; reject: (e: Error) => void };
  const ready = new Promise<{ model: string; dimensions: number }>((resolve, reject) => (settleReady = { resolve, reject }));
  const end = (error: Error) => {
    ended ??= error;
    settleReady.reject(error);
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  worker.on('message', (reply: WorkerReply) => {
    if (reply.type === 'ready') return settleReady.resolve({ model: reply.model, dimensions: reply.dimensions });
    if (reply.type === 'failed') return end(rethrown(reply.error));
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    // An idle worker does not keep the process alive.
    if (pending.size === 0) worker.unref();
    if (reply.type === 'vectors') waiting?.resolve(reply.vectors);
    else waiting?.reject(rethrown(reply.error));
  });
  worker.on('error', (error) => end(new UnavailableError(`the embedding worker failed: ${error.message}`, { cause: error })));
  worker.on('exit', () => end(new UnavailableError('the embedding worker stopped')));
  return {
    alive: () => ended === undefined,
    ready,
    embed: (texts, kind) =>
      new Promise<Float32Array[]>((resolve, reject) => {
        if (ended) return reject(ended);
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ type: 'embed', id, texts, kind } satisfies WorkerRequest);
      }),
    close: async () => {
      await worker.terminate();
    },
  };
};

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
  /** A lane whose worker died is started again on the next call. */
  const lane = (kind: EmbeddingKind): Lane => {
    if (kind === 'document') return (documents ??= openLane(options));
    return (queries ??= openLane({ ...options, intraOpThreads: 1 }));
  };
  return {
    model,
    dimensions,
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      const used = lane(kind);
      try {
        const vectors = await used.embed(texts, kind);
        embeddingActivity.vectorsMade += vectors.length;
        return vectors;
      } catch (error) {
        if (!used.alive()) {
          if (used === documents) documents = undefined;
          if (used === queries) queries = undefined;
        }
        throw error;
      }
    },
    async close() {
      await Promise.all([documents?.close(), queries?.close()]);
      documents = queries = undefined;
    },
  };
};

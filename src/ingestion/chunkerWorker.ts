import { treeSitterChunker } from '../../infra/chunking/chunker.js';
import { serveWorkerRpc } from '../../infra/workers/workerRpc.js';
import type { Chunker } from '../ports/chunker.js';

/** The thread of the worker chunker: parsing and splitting files happen here, off the request thread. */
await serveWorkerRpc(
  () => Promise.resolve({ state: treeSitterChunker, info: null }),
  (chunker, input: Parameters<Chunker['chunk']>[0]) => chunker.chunk(input),
);

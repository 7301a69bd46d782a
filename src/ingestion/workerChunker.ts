import { treeSitterChunker } from '../../infra/chunking/chunker.js';
import { openWorkerRpc, type WorkerRpc } from '../../infra/workers/workerRpc.js';
import type { Chunk } from '../domain/documents.js';
import type { Chunker } from '../ports/chunker.js';

type Thread = WorkerRpc<Parameters<Chunker['chunk']>[0], Chunk[], null>;

/**
 * The tree-sitter chunker run in a worker thread, so that parsing a large file never holds the
 * event loop that answers requests. Files are chunked one at a time, in the order they are asked
 * for, so concurrent jobs take turns. The thread starts on first use, and again if it ends.
 */
export const createWorkerChunker = (): Chunker & { close(): Promise<void> } => {
  let thread: Thread | undefined;
  return {
    contentTypeOf: (path) => treeSitterChunker.contentTypeOf(path),
    chunk: (input) => {
      if (!thread?.alive()) thread = openWorkerRpc(new URL('./chunkerWorker', import.meta.url), null);
      return thread.call(input);
    },
    close: async () => {
      await thread?.close();
      thread = undefined;
    },
  };
};

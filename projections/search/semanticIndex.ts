import { searchChunkChanges, semanticPassage, SEARCH_EVENT_TYPES, type SearchChunk } from '../../src/domain/searchChunks.js';
import type { Embedder } from '../../src/ports/embedder.js';
import type { CancelledWork, PendingChunk, VectorIndexProjection } from '../../src/ports/searchIndex.js';

/** Chunks are embedded in pieces of this many, each after asking again which work is cancelled. */
export const EMBEDDING_PIECE = 64;

/**
 * The semantic index: each chunk's embedding (of its title and text), through the embedder's
 * cache, so a chunk embedded once is never embedded again. With `cancelled`, the chunks of
 * cancelled jobs are set aside unembedded (keyword search has them) under the job's repository,
 * until a job for that repository is requested again: the cancel stops the job's embedding too,
 * and indexing the repository again completes it.
 */
export const semanticIndexProjection = (embedder: Embedder, cancelled?: CancelledWork): VectorIndexProjection => ({
  name: 'semantic',
  version: 1,
  get dimensions() {
    return embedder.dimensions;
  },
  computes: true,
  eventTypes: cancelled ? [...SEARCH_EVENT_TYPES, 'IndexingJobRequested'] : SEARCH_EVENT_TYPES,
  changes: searchChunkChanges,
  ...(cancelled
    ? {
        resumes: (event) =>
          event.type === 'IndexingJobRequested'
            ? { project: event.metadata.project, key: event.data.repoPath, workId: event.data.jobId }
            : null,
      }
    : {}),
  // With set-aside, in pieces: before each it asks which work is cancelled, so that a cancel stops
  // the embedding within a piece. A cancelled work's chunks are set aside, unless an event of the
  // batch brings them back after their own.
  index: async (pending, texts, resumed) => {
    const indexed: SearchChunk[] = [];
    const values: Float32Array[] = [];
    const setAside: { chunk: SearchChunk; key: string }[] = [];
    const workIds = [...new Set([...pending.map((p) => p.workId), ...resumed.map((r) => r.workId)])];
    const piece = cancelled ? EMBEDDING_PIECE : Math.max(1, pending.length);
    for (let from = 0; from < pending.length; from += piece) {
      const now = cancelled ? await cancelled(workIds) : new Map<string, string>();
      const setAsideUnder = (p: PendingChunk) => {
        const key = now.get(p.workId);
        const resumedLater = resumed.some(
          (r) => r.position > p.position && r.project === p.chunk.project && r.key === key && !now.has(r.workId),
        );
        return resumedLater ? undefined : key;
      };
      const embedding: SearchChunk[] = [];
      for (const p of pending.slice(from, from + piece)) {
        const key = setAsideUnder(p);
        if (key === undefined) embedding.push(p.chunk);
        else setAside.push({ chunk: p.chunk, key });
      }
      const passages = embedding.map((c) => semanticPassage(c.title, texts.get(c.textHash)));
      // One by one: a piece without set-aside is the whole batch, too long an argument list for a spread.
      for (const vector of await embedder.embed(passages, 'document')) values.push(vector);
      for (const chunk of embedding) indexed.push(chunk);
    }
    return { indexed, values, setAside };
  },
});

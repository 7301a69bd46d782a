import type { StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import type { SearchChunk } from '../../src/domain/searchChunks.js';
import type { ChunkIndexProjection, PendingChunk, Resumption } from '../../src/ports/searchIndex.js';

/** A search index kept in memory, as the adapters keep one: what the fast tier checks a projection's declaration against. */
export interface MemoryChunkIndex<Value> {
  /** Applies `events` as one batch (those of other types are passed over). */
  apply(events: readonly StoredEvent[]): Promise<void>;
  /** By chunk id: the chunks the index holds, each with its value. */
  readonly indexed: Map<string, { chunk: SearchChunk; value: Value }>;
  /** By chunk id: the chunks set aside without a value, each under its key. */
  readonly setAside: Map<string, { chunk: SearchChunk; key: string }>;
}

/**
 * Holds what `projection` says: per document only the last change of a batch counts and replaces
 * all its chunks; chunks whose text is missing from `texts` (by text hash) are left out; an event
 * that resumes brings back the set-aside chunks of its key, save those of documents the batch changes.
 */
export const memoryChunkIndex = <Value>(
  projection: ChunkIndexProjection<Value>,
  texts: ReadonlyMap<string, string>,
): MemoryChunkIndex<Value> => {
  const indexed = new Map<string, { chunk: SearchChunk; value: Value }>();
  const setAside = new Map<string, { chunk: SearchChunk; key: string }>();
  const handled = new Set<string>(projection.eventTypes);
  return {
    indexed,
    setAside,
    async apply(events) {
      const changes = new Map<string, PendingChunk[]>();
      const resumes: (Resumption & { position: Position })[] = [];
      for (const event of events.filter((e) => handled.has(e.type))) {
        const change = projection.changes(event);
        if (change)
          changes.set(
            change.documentId,
            change.chunks.map((chunk) => ({ chunk, workId: event.metadata.correlationId, position: event.position })),
          );
        const resume = projection.resumes?.(event);
        if (resume) resumes.push({ ...resume, position: event.position });
      }
      const lastResume = new Map(resumes.map((r) => [`${r.project}\u0000${r.key}`, r]));
      const resumed = [...setAside.values()].flatMap(({ chunk, key }) => {
        const by = lastResume.get(`${chunk.project}\u0000${key}`);
        return by && !changes.has(chunk.documentId) ? [{ chunk, workId: by.workId, position: by.position }] : [];
      });
      const pending = [...[...changes.values()].flat(), ...resumed].filter((p) => texts.has(p.chunk.textHash));
      const result = await projection.index(pending, texts, resumes);
      for (const [chunkId, { chunk }] of [...indexed, ...setAside])
        if (changes.has(chunk.documentId)) {
          indexed.delete(chunkId);
          setAside.delete(chunkId);
        }
      for (const entry of result.setAside) setAside.set(entry.chunk.chunkId, entry);
      result.indexed.forEach((chunk, i) => {
        indexed.set(chunk.chunkId, { chunk, value: result.values[i]! });
        setAside.delete(chunk.chunkId);
      });
    },
  };
};

/** A chunk offered for annotation: its id, where it sits in its document, and its text. */
export interface SourceChunk {
  chunkId: string;
  position: number;
  text: string;
}

/**
 * Where annotation sessions find indexed content. Invariants: chunk ids are unique across one
 * answer; `chunksOfDocuments` returns every chunk of the named documents in document order and
 * ignores unknown ids; `chunksMatching` returns at most `limit` chunks, best match first.
 */
export interface ChunkSource {
  chunksOfDocuments(documentIds: readonly string[]): Promise<SourceChunk[]>;
  chunksMatching(query: string, limit: number): Promise<SourceChunk[]>;
}

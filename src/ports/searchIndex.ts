import type { EventType, StoredEvent } from '../domain/events.js';
import type { Position } from '../domain/position.js';
import type { SearchChunk } from '../domain/searchChunks.js';

/** Filters every index applies before ranking. */
export interface SearchFilters {
  project: string;
  source?: string;
  tags?: readonly string[];
  /** Documents updated at or after / at or before (ISO 8601). */
  since?: string;
  until?: string;
}

export interface ScoredChunk {
  chunkId: string;
  documentId: string;
  /** Higher is better; comparable only within one index's answer. */
  score: number;
  /** The index's own excerpt of the chunk around the matches (highlighted, typos included), if it makes one. */
  snippet?: string | null;
}

/** Full-text ranking (BM25) over chunk texts. */
export interface KeywordIndex {
  search(query: string, filters: SearchFilters, limit: number): Promise<ScoredChunk[]>;
  /**
   * The documents with a chunk matching the query's terms under the filters (an index may bound how
   * many chunks it looks at, best first): how many per source, and which of `among` are some of
   * them. Absent where the index cannot count.
   */
  countDocuments?(query: string, filters: SearchFilters, among: readonly string[]): Promise<DocumentCount>;
  /**
   * Resolves once the server holding the index answers and accepts the ledger's key, within
   * `timeoutMs`; rejects with why not (an UnavailableError). Absent where the index lives in the
   * ledger's own database.
   */
  probe?(timeoutMs: number): Promise<void>;
}

export interface DocumentCount {
  bySource: Map<string, number>;
  among: Set<string>;
}

/** Chunks whose vectors pull a query toward them (pseudo-relevance feedback). */
export interface VectorFeedback {
  chunkIds: readonly string[];
  /** The mean of their vectors is added to the query's at this weight (both of unit length). */
  weight: number;
}

/** Nearest chunks by embedding (cosine similarity). */
export interface VectorIndex {
  search(vector: Float32Array, filters: SearchFilters, limit: number): Promise<ScoredChunk[]>;
  /**
   * The chunks among `chunkIds`, nearest first to `vector` moved toward the feedback chunks: a
   * query refined by its first answers ranks again the candidates already found.
   */
  rerank(vector: Float32Array, chunkIds: readonly string[], feedback: VectorFeedback): Promise<ScoredChunk[]>;
}

/** A chunk a batch gives an index, as part of the work `workId`: the correlation id of the event at `position` that asked for it. */
export interface PendingChunk {
  chunk: SearchChunk;
  workId: string;
  position: Position;
}

/** An event that brings back the chunks of `project` set aside under `key`, now as part of the work `workId`. */
export interface Resumption {
  project: string;
  key: string;
  workId: string;
}

/** What an index keeps of a batch's chunks: each with its value, or set aside without one under a key. */
export interface IndexedChunks<Value> {
  indexed: SearchChunk[];
  /** One per chunk of `indexed`, in its order. */
  values: Value[];
  setAside: { chunk: SearchChunk; key: string }[];
}

/**
 * A search index as a projection declares it (in projections/): its name and version, which events
 * it handles, what each changes, and what each chunk is indexed as. An adapter (a Postgres table,
 * a Meilisearch index) stores the chunks and keeps the checkpoint.
 */
export interface ChunkIndexProjection<Value> {
  readonly name: string;
  /** Bump when what a chunk is indexed as changes meaning: a new version is rebuilt from the first event. */
  readonly version: number;
  readonly eventTypes: readonly EventType[];
  /** Indexing a chunk computes (embeds) more than it writes: the runner gives the index a feed of its own. */
  readonly computes?: boolean;
  /** What `event` changes: a document's chunks replaced as a whole (an empty list removes them), or nothing. */
  changes(event: StoredEvent): { documentId: string; chunks: SearchChunk[] } | null;
  /**
   * Present when the index sets chunks aside without a value (where they wait in the adapter's
   * store): the set-aside chunks `event` brings back, or null.
   */
  resumes?(event: StoredEvent): Resumption | null;
  /**
   * The values of `pending` (every chunk's text is in `texts`), and the chunks set aside instead;
   * `resumed` are the batch's events that bring set-aside chunks back, each at its position.
   * Called before the write opens: it may be slow (embedding).
   */
  index(
    pending: readonly PendingChunk[],
    texts: ReadonlyMap<string, string>,
    resumed: readonly (Resumption & { position: Position })[],
  ): Promise<IndexedChunks<Value>>;
}

/** The semantic index's projection: what it writes are vectors of `dimensions` numbers. */
export interface VectorIndexProjection extends ChunkIndexProjection<Float32Array> {
  readonly dimensions: number;
}

/** Of these work ids, those cancelled now, each with the key its chunks are set aside under. */
export type CancelledWork = (workIds: readonly string[]) => Promise<Map<string, string>>;

/** The semantic index's chunks, and how many it should hold: the keyword index's, less those set aside. */
export interface EmbeddingBacklog {
  rows: number;
  total: number;
}

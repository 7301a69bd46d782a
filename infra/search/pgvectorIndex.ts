import type { ContentStore } from '../../src/ports/contentStore.js';
import type { RunnableProjection } from '../../src/ports/projections.js';
import type { EmbeddingBacklog, VectorIndex, VectorIndexProjection } from '../../src/ports/searchIndex.js';
import type { Database } from '../postgres/database.js';
import { KEYWORD_CHUNK_TABLE } from './pgTextsearchKeywordIndex.js';
import {
  filterConditions,
  openChunkTableSnapshot,
  postgresChunkIndexProjection,
  type ChunkTableSnapshot,
  type ChunkTableSpec,
  deferredTableOf,
} from './postgresChunkIndex.js';

const SEMANTIC_TABLE = 'search_semantic';

/**
 * maintenance_work_mem for an HNSW build in bulk (a rebuild on a PostgreSQL server, a time-travel
 * snapshot; see `indexesCopiesFirst` in infra/postgres/database.ts): the graph of 100,000 384-dimension vectors
 * takes about 200 MB, and outgrew the embedded database's default 64 MB at some 30,000 (then the
 * build goes to disk and takes many times longer). Beyond what it holds, the build still completes,
 * on disk.
 */
export const HNSW_BUILD_MEMORY_MB = 512;

const literal = (vector: Float32Array) => `[${Array.from(vector).join(',')}]`;

/** The semantic index's vectors in a pgvector column, under an HNSW graph (cosine). */
const semanticTable = (dimensions: number): ChunkTableSpec<Float32Array> => ({
  table: SEMANTIC_TABLE,
  valueType: `vector(${dimensions})`,
  valueIndex: (table, index) => `CREATE INDEX ${index} ON ${table} USING hnsw (value vector_cosine_ops)`,
  sqlValue: (_chunk, vector) => literal(vector),
  buildMemoryMb: HNSW_BUILD_MEMORY_MB,
});

/** Cosine nearest neighbours over the chunk embeddings of `table` (schema-qualified or not). */
const cosineSearch = (db: Database, table: string): VectorIndex => ({
  search: (vector, filters, limit) =>
    db.transaction(async (tx) => {
      // Filters are applied while walking the graph, so a narrow filter still fills the page.
      // Both settings in one statement: each is a turn on an embedded database's connection.
      const efSearch = String(Math.max(40, Math.min(1000, limit * 2)));
      await tx.query(
        `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)`,
        [efSearch],
      );
      const params: unknown[] = [literal(vector)];
      const where = filterConditions(filters, params);
      params.push(limit);
      const rows = await tx.query<{ chunk_id: string; document_id: string; distance: number }>(
        `SELECT chunk_id, document_id, value <=> $1::vector AS distance FROM ${table}
         WHERE ${where.join(' AND ')} ORDER BY value <=> $1::vector LIMIT $${params.length}`,
        params,
      );
      return rows.map((r) => ({ chunkId: r.chunk_id, documentId: r.document_id, score: 1 - r.distance }));
    }),
  // $1 is the query divided by the feedback's weight, plus the feedback chunks' mean vector: that
  // points where query + weight × mean does, and cosine distance reads only the direction.
  rerank: async (vector, chunkIds, feedback) => {
    const rows = await db.query<{ chunk_id: string; document_id: string; distance: number }>(
      `WITH near AS (
         SELECT coalesce($1::vector + avg(value), $1::vector) AS vector FROM ${table} WHERE chunk_id = ANY($2::text[])
       )
       SELECT chunk_id, document_id, value <=> near.vector AS distance FROM ${table}, near
       WHERE chunk_id = ANY($3::text[]) ORDER BY distance`,
      [literal(vector.map((x) => x / feedback.weight)), feedback.chunkIds, chunkIds],
    );
    return rows.map((r) => ({ chunkId: r.chunk_id, documentId: r.document_id, score: 1 - r.distance }));
  },
});

/** Cosine nearest neighbours over chunk embeddings with pgvector's HNSW index, kept by the semantic index projection. */
export const createPgvectorIndex = async (
  db: Database,
  content: ContentStore,
  semantic: VectorIndexProjection,
): Promise<{ projection: RunnableProjection; index: VectorIndex }> => {
  await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  const spec = semanticTable(semantic.dimensions);
  const projection = await postgresChunkIndexProjection(db, content, semantic, spec);
  return { projection, index: cosineSearch(db, spec.table) };
};

/**
 * The semantic index built apart in `schema`, without the HNSW graph: a temporary model answers a
 * few queries, and scanning it exactly costs less than building the graph.
 */
export const openPgvectorSnapshot = async (
  db: Database,
  content: ContentStore,
  semantic: VectorIndexProjection,
  schema: string,
): Promise<ChunkTableSnapshot & { index: VectorIndex }> => {
  const snapshot = await openChunkTableSnapshot(db, content, semantic, semanticTable(semantic.dimensions), schema, {
    valueIndex: false,
  });
  return { ...snapshot, index: cosineSearch(db, snapshot.table) };
};

/** The semantic index's chunks, and the keyword index's less those set aside unembedded: how many it should hold. */
export const embeddingBacklog = async (db: Database): Promise<EmbeddingBacklog> =>
  (
    await db.query<EmbeddingBacklog>(
      `SELECT (SELECT count(*)::int FROM ${SEMANTIC_TABLE}) AS rows,
              (SELECT count(*)::int FROM ${KEYWORD_CHUNK_TABLE}) - (SELECT count(*)::int FROM ${deferredTableOf(SEMANTIC_TABLE)}) AS total`,
    )
  )[0]!;

/** How many chunks of `project` the semantic index holds unembedded, set aside for cancelled work. */
export const countSetAside = async (db: Database, project: string): Promise<number> =>
  (
    await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${deferredTableOf(SEMANTIC_TABLE)} WHERE project = $1`, [
      project,
    ])
  )[0]!.n;

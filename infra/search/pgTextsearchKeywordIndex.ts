import { codeAwareQuery, codeAwareText } from '../../src/domain/codeTerms.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { RunnableProjection } from '../../src/ports/projections.js';
import type { ChunkIndexProjection, KeywordIndex, SearchFilters } from '../../src/ports/searchIndex.js';
import type { Database } from '../postgres/database.js';
import {
  filterConditions,
  openChunkTableSnapshot,
  postgresChunkIndexProjection,
  shadowTableOf,
  valueIndexName,
  type ChunkTableSnapshot,
  type ChunkTableSpec,
} from './postgresChunkIndex.js';

/** The table of the keyword index's chunks. */
export const KEYWORD_CHUNK_TABLE = 'search_keyword';

/** The keyword index's chunks as a BM25-indexed column of their title and text, with the words inside compound identifiers. */
const KEYWORD_TABLE: ChunkTableSpec<string> = {
  table: KEYWORD_CHUNK_TABLE,
  valueType: 'text',
  // b = 1: full length normalisation. Code chunks vary in length far more than prose, and a long
  // function must not win by the sheer number of its words (SciFact is unchanged by it).
  valueIndex: (table, index) =>
    `CREATE INDEX ${index} ON ${table} USING bm25 (value) WITH (text_config = 'english', b = 1.0)`,
  sqlValue: (chunk, text) => codeAwareText([chunk.title, text].filter((part) => part).join('\n')),
};

/** The tables that keep chunk texts in plain text, as BM25 needs them: the live one and a rebuild's. */
export const KEYWORD_TEXT_TABLES = [KEYWORD_TABLE.table, shadowTableOf(KEYWORD_TABLE.table)];

/**
 * Chunks a count of matches looks at, best first: each costs a BM25 score on the database's one
 * connection, which every search shares, so a query matching most of a large corpus is counted up to here.
 */
const COUNT_LIMIT = 400;

/**
 * BM25 over the chunk texts of `table` (schema-qualified or not). pg_textsearch's scores are
 * negative, lower is better; the port's are positive, higher is better. The index scan yields the
 * matching chunks in order, each with its score: `bm25_get_current_score()` reads the score of the
 * row the scan just returned, where `value <@> query` in the select list would score the row again
 * from its text, at some ten times the cost of the whole scan. It is only right under an index
 * scan, which the planner would forgo for a sequential scan and a sort on a table of a few rows.
 */
const bm25Search = (db: Database, table: string): KeywordIndex => {
  /** Ranks with the BM25 index first, then filters: a filtered scan would score every row. */
  const rankThenFilter = async (query: string, filters: SearchFilters, limit: number, candidates: number | null) => {
    const params: unknown[] = [query, valueIndexName(table)];
    const where = filterConditions(filters, params);
    params.push(limit);
    const limitParam = `$${params.length}`;
    let ranked =
      `SELECT chunk_id, document_id, project, source, tags, updated_at, bm25_get_current_score() AS score ` +
      `FROM ${table} ORDER BY value <@> to_bm25query($1, $2)`;
    if (candidates !== null) {
      params.push(candidates);
      ranked += ` LIMIT $${params.length}`;
    }
    // The score is the index scan's: a small table must not be sorted by a scan of its rows instead.
    return db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      // Numbered as they arrive, so the filtered rows keep the index's order.
      return tx.query<{ chunk_id: string; document_id: string; score: number }>(
        `SELECT chunk_id, document_id, score
         FROM (SELECT *, row_number() OVER () AS rank FROM (${ranked}) AS ordered) AS candidate
         WHERE ${where.join(' AND ')} ORDER BY rank LIMIT ${limitParam}`,
        params,
      );
    });
  };
  const matchingChunks = async (query: string, atMost: number) => {
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${table} ORDER BY value <@> to_bm25query($1, $2) LIMIT $3) AS top`,
      [query, valueIndexName(table), atMost],
    );
    return row?.n ?? 0;
  };
  /**
   * Counted here rather than in SQL: with the counting in the same statement (a CTE grouped and
   * searched twice), the index scan under it runs some fifty times slower.
   */
  const countDocuments = async (rawQuery: string, filters: SearchFilters, among: readonly string[]) => {
    const params: unknown[] = [codeAwareQuery(rawQuery), valueIndexName(table)];
    const where = filterConditions(filters, params);
    const matched = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query<{ document_id: string; source: string }>(
        `SELECT DISTINCT document_id, source FROM (
           SELECT document_id, project, source, tags, updated_at, bm25_get_current_score() AS score
           FROM ${table} ORDER BY value <@> to_bm25query($1, $2) LIMIT ${COUNT_LIMIT}) AS scored
         WHERE score < 0 AND ${where.join(' AND ')}`,
        params,
      );
    });
    const wanted = new Set(among);
    const bySource = new Map<string, number>();
    const matchedAmong = new Set<string>();
    for (const { document_id: documentId, source } of matched) {
      bySource.set(source, (bySource.get(source) ?? 0) + 1);
      if (wanted.has(documentId)) matchedAmong.add(documentId);
    }
    return { bySource, among: matchedAmong };
  };
  return {
    countDocuments,
    async search(rawQuery, filters, limit) {
      const query = codeAwareQuery(rawQuery);
      const candidates = Math.max(200, limit * 4);
      let rows = await rankThenFilter(query, filters, limit, candidates);
      // A narrow filter can leave too few of the best-ranked candidates: then rank what it allows.
      if (rows.length < limit && (await matchingChunks(query, candidates)) >= candidates) {
        rows = await rankThenFilter(query, filters, limit, null);
      }
      return rows
        .filter((r) => r.score < 0)
        .map((r) => ({ chunkId: r.chunk_id, documentId: r.document_id, score: -r.score }));
    },
  };
};

/** BM25 over chunk texts through pg_textsearch (embedded default), kept by the keyword index projection. */
export const createPgTextsearchKeywordIndex = async (
  db: Database,
  content: ContentStore,
  keyword: ChunkIndexProjection<string>,
): Promise<{ projection: RunnableProjection; index: KeywordIndex }> => {
  await db.exec('CREATE EXTENSION IF NOT EXISTS pg_textsearch');
  const projection = await postgresChunkIndexProjection(db, content, keyword, KEYWORD_TABLE);
  return { projection, index: bm25Search(db, KEYWORD_TABLE.table) };
};

/** The keyword index built apart in `schema`: the projection's table and ranking, queried once sealed. */
export const openPgTextsearchSnapshot = async (
  db: Database,
  content: ContentStore,
  keyword: ChunkIndexProjection<string>,
  schema: string,
): Promise<ChunkTableSnapshot & { index: KeywordIndex }> => {
  await db.exec('CREATE EXTENSION IF NOT EXISTS pg_textsearch');
  const snapshot = await openChunkTableSnapshot(db, content, keyword, KEYWORD_TABLE, schema, { valueIndex: true });
  return { ...snapshot, index: bm25Search(db, snapshot.table) };
};

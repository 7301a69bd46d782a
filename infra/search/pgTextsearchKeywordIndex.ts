import type { ContentStore } from '../../src/ports/contentStore.js';
import type { RunnableProjection } from '../../src/ports/projections.js';
import type { KeywordIndex } from '../../src/ports/searchIndex.js';
import type { Database } from '../postgres/database.js';
import { filterConditions, postgresChunkIndexProjection, valueIndexName } from './postgresChunkIndex.js';

const TABLE = 'search_keyword';

/**
 * BM25 over chunk texts through pg_textsearch (embedded default). Its scores are negative,
 * lower is better; the port's are positive, higher is better.
 */
export const createPgTextsearchKeywordIndex = async (
  db: Database,
  content: ContentStore,
): Promise<{ projection: RunnableProjection; index: KeywordIndex }> => {
  await db.exec('CREATE EXTENSION IF NOT EXISTS pg_textsearch');
  const projection = await postgresChunkIndexProjection(db, content, {
    name: 'keyword',
    version: 1,
    table: TABLE,
    valueType: 'text',
    valueIndex: (table, index) => `CREATE INDEX ${index} ON ${table} USING bm25 (value) WITH (text_config = 'english')`,
    values: (chunks, texts) =>
      Promise.resolve(chunks.map((c) => [c.title, texts.get(c.textHash)].filter((part) => part).join('\n'))),
  });
  const index: KeywordIndex = {
    async search(query, filters, limit) {
      const params: unknown[] = [query, `${valueIndexName(TABLE)}`];
      const where = filterConditions(filters, params);
      params.push(limit);
      const rows = await db.query<{ chunk_id: string; document_id: string; score: number }>(
        `SELECT chunk_id, document_id, value <@> to_bm25query($1, $2) AS score FROM ${TABLE}
         WHERE ${where.join(' AND ')} ORDER BY value <@> to_bm25query($1, $2) LIMIT $${params.length}`,
        params,
      );
      return rows
        .filter((r) => r.score < 0)
        .map((r) => ({ chunkId: r.chunk_id, documentId: r.document_id, score: -r.score }));
    },
  };
  return { projection, index };
};

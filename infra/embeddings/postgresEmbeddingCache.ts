import type { Database } from '../postgres/database.js';
import type { EmbeddingCache } from '../../src/ports/embedder.js';

export const EMBEDDING_CACHE_SCHEMA = `
CREATE TABLE IF NOT EXISTS embedding_cache (
  model text NOT NULL,
  content_hash text NOT NULL,
  vector real[] NOT NULL,
  PRIMARY KEY (model, content_hash)
);`;

/** Postgres array literal of a vector; a float32 printed as the shortest double reads back exactly. */
const arrayLiteral = (vector: Float32Array): string => `{${vector.join(',')}}`;

/**
 * Embeddings kept in Postgres (PGlite or a server), so a rebuild of the semantic index re-embeds
 * nothing it has embedded before. Each `get` and `put` is one statement.
 */
export const createPostgresEmbeddingCache = async (db: Database): Promise<EmbeddingCache> => {
  await db.exec(EMBEDDING_CACHE_SCHEMA);
  return {
    async get(model, contentHashes) {
      if (contentHashes.length === 0) return new Map();
      const rows = await db.query<{ content_hash: string; vector: number[] }>(
        'SELECT content_hash, vector FROM embedding_cache WHERE model = $1 AND content_hash = ANY($2::text[])',
        [model, contentHashes],
      );
      return new Map(rows.map((row) => [row.content_hash, Float32Array.from(row.vector)]));
    },
    async put(model, entries) {
      if (entries.size === 0) return;
      await db.query(
        `INSERT INTO embedding_cache (model, content_hash, vector)
         SELECT $1, entry.content_hash, entry.vector::real[]
         FROM unnest($2::text[], $3::text[]) AS entry(content_hash, vector)
         ON CONFLICT (model, content_hash) DO NOTHING`,
        [model, [...entries.keys()], [...entries.values()].map(arrayLiteral)],
      );
    },
  };
};

import type { Database } from '../postgres/database.js';

/** The settings that decide which Postgres extensions the read models need. */
export interface ExtensionNeeds {
  keywordIndex: 'pg_textsearch' | 'meilisearch';
  embeddingsProvider: 'local' | 'http' | 'none';
}

/**
 * One line per extension the configuration needs and the server cannot create, naming the setting
 * that needs it and what to set instead. Empty when the server has everything.
 */
export const missingExtensions = (needs: ExtensionNeeds, available: ReadonlySet<string>): string[] => {
  const problems: string[] = [];
  if (needs.keywordIndex === 'pg_textsearch' && !available.has('pg_textsearch')) {
    problems.push(
      'the PostgreSQL server has no extension "pg_textsearch", which search.keyword_index = "pg_textsearch" needs: ' +
        'install pg_textsearch on the server, or set search.keyword_index = "meilisearch" (with search.meilisearch_url)',
    );
  }
  if (needs.embeddingsProvider !== 'none' && !available.has('vector')) {
    problems.push(
      `the PostgreSQL server has no extension "vector" (pgvector), which embeddings.provider = "${needs.embeddingsProvider}" needs: ` +
        'install pgvector on the server (e.g. the pgvector/pgvector image), or set embeddings.provider = "none" (keyword search only)',
    );
  }
  return problems;
};

/** Checks a PostgreSQL server before any read model is created on it; PGlite bundles both extensions. */
export const checkPostgresExtensions = async (db: Database, needs: ExtensionNeeds): Promise<string[]> =>
  db.engine === 'postgres' ? missingExtensions(needs, await db.availableExtensions()) : [];

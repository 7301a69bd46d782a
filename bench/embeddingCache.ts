import type { Database } from '../infra/postgres/database.js';

/**
 * Document vectors in the embedding cache (query vectors are kept apart, under `model#query`): a
 * rebuild that embeds nothing leaves the count as it was.
 */
export const cachedDocumentVectors = async (db: Database): Promise<number> =>
  (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM embedding_cache WHERE model NOT LIKE '%#query'`,
    )
  )[0]?.n ?? 0;

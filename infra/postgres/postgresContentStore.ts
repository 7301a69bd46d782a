import { contentHash } from '../../src/domain/ids.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { Database } from './database.js';

export const createPostgresContentStore = async (db: Database): Promise<ContentStore> => {
  await db.exec(`CREATE TABLE IF NOT EXISTS content_blobs (hash text PRIMARY KEY, content text NOT NULL)`);
  return {
    async put(texts) {
      const hashes = texts.map(contentHash);
      const unique = new Map(hashes.map((hash, i) => [hash, texts[i]!]));
      if (unique.size > 0) {
        await db.query(
          `INSERT INTO content_blobs (hash, content) SELECT * FROM unnest($1::text[], $2::text[])
           ON CONFLICT (hash) DO NOTHING`,
          [[...unique.keys()], [...unique.values()]],
        );
      }
      return hashes;
    },
    async get(hashes) {
      if (hashes.length === 0) return new Map();
      const rows = await db.query<{ hash: string; content: string }>(
        'SELECT hash, content FROM content_blobs WHERE hash = ANY($1::text[])',
        [[...new Set(hashes)]],
      );
      return new Map(rows.map((r) => [r.hash, r.content]));
    },
  };
};

import { contentHash } from '../../src/domain/ids.js';
import type { ContentErasure } from '../../src/ports/contentErasure.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { Sql } from '../../src/ports/database.js';
import type { Database } from './database.js';

const SCHEMA = `CREATE TABLE IF NOT EXISTS content_blobs (hash text PRIMARY KEY, content text NOT NULL)`;

export const createPostgresContentStore = async (db: Database): Promise<ContentStore> => {
  await db.exec(SCHEMA);
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

const tableExists = async (sql: Sql, table: string) =>
  (await sql.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [table]))[0]?.found ===
  true;

/**
 * The hashes among `hashes` that a document not forgotten holds in its current version, found in
 * the documents read model (`rm_documents`), whose GIN index answers these containment tests.
 */
const heldHashes = async (sql: Sql, hashes: readonly string[]): Promise<Set<string>> => {
  if (!(await tableExists(sql, 'rm_documents'))) return new Set();
  const rows = await sql.query<{ hash: string }>(
    `SELECT h AS hash FROM unnest($1::text[]) AS h WHERE EXISTS (
       SELECT 1 FROM rm_documents d WHERE NOT (d.doc ? 'forgotten') AND (
         d.doc @> jsonb_build_object('bodyHash', h)
         OR d.doc @> jsonb_build_object('chunks', jsonb_build_array(jsonb_build_object('textHash', h)))))`,
    [hashes],
  );
  return new Set(rows.map((r) => r.hash));
};

/** What an erasure reaches beyond the content store, as the search indexes keep it. */
export interface ErasureReach {
  /** Tables of the keyword index that copy chunk texts (their rows are deleted by its projection before the erasure runs). */
  textTables: readonly string[];
  /** The passage the semantic index embeds for a chunk's text under a document's title: its cache key. */
  passageOf: (title: string | null, text: string) => string;
}

/**
 * Erases content rows and the embedding cache entries of their passages (each text under every
 * title the document had), in one transaction, keeping texts a live document holds. Then purges
 * the tables they were deleted from, so that their bytes leave the database's files too: deleted
 * rows stay in a table's pages, and inserted ones in the write-ahead log, until rewritten.
 */
export const createPostgresContentErasure = async (db: Database, reach: ErasureReach): Promise<ContentErasure> => {
  // Tables from which an erasure deletes rows: content, cached embeddings, the keyword index's texts.
  const erasedFrom = ['content_blobs', 'embedding_cache', ...reach.textTables];
  await db.exec(SCHEMA);
  return {
    erase: async ({ hashes, titles }) => {
      const erased = await db.transaction(async (tx) => {
        const unique = [...new Set(hashes)];
        const held = await heldHashes(tx, unique);
        const erase = unique.filter((hash) => !held.has(hash));
        const rows = await tx.query<{ content: string }>(
          'DELETE FROM content_blobs WHERE hash = ANY($1::text[]) RETURNING content',
          [erase],
        );
        if (await tableExists(tx, 'embedding_cache')) {
          const passages = new Set(
            rows.flatMap(({ content }) =>
              [...new Set(titles)].map((title) => contentHash(reach.passageOf(title, content))),
            ),
          );
          await tx.query('DELETE FROM embedding_cache WHERE content_hash = ANY($1::text[])', [[...passages]]);
        }
        return { erased: rows.length, kept: held.size };
      });
      // Also when nothing was left to delete: an earlier erasure may have stopped before its purge.
      await db.purge(erasedFrom);
      return erased;
    },
  };
};

import { randomBytes } from 'node:crypto';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type {
  ChunkIndexProjection,
  KeywordIndex,
  VectorIndex,
  VectorIndexProjection,
} from '../../src/ports/searchIndex.js';
import type { Database } from '../postgres/database.js';
import { openPgTextsearchSnapshot } from './pgTextsearchKeywordIndex.js';
import { openPgvectorSnapshot } from './pgvectorIndex.js';
import type { ChunkTableSnapshot } from './postgresChunkIndex.js';

const PREFIX = 'search_asof_';

type Snapshot<Index> = ChunkTableSnapshot & { index: Index };

export interface AsOfSchema {
  keyword(): Promise<Snapshot<KeywordIndex>>;
  semantic(): Promise<Snapshot<VectorIndex>>;
  drop(): Promise<void>;
}

/**
 * Temporary schemas (`search_asof_<random>`) where the keyword and semantic tables are built as of
 * a past position. The embedded database belongs to one process, so schemas left by a crash are
 * dropped at start-up there; a PostgreSQL server may be shared, so its leftovers are left alone.
 */
export const createAsOfSchemas = async (
  db: Database,
  content: ContentStore,
  keyword: ChunkIndexProjection<string>,
  semantic: VectorIndexProjection | null,
): Promise<{ open(): Promise<AsOfSchema> }> => {
  if (db.engine === 'pglite') {
    const leftovers = await db.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)`,
      [PREFIX],
    );
    for (const { name } of leftovers) await db.exec(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  }
  return {
    open: async () => {
      const schema = `${PREFIX}${randomBytes(8).toString('hex')}`;
      await db.exec(`CREATE SCHEMA ${schema}`);
      return {
        keyword: () => openPgTextsearchSnapshot(db, content, keyword, schema),
        semantic: async () => {
          if (!semantic) throw new Error('Semantic indexes need an embedder');
          return openPgvectorSnapshot(db, content, semantic, schema);
        },
        drop: () => db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
      };
    },
  };
};

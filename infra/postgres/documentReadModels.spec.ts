import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { position, START } from '../../src/domain/position.js';
import type { DocumentProjection } from '../../src/ports/projections.js';
import { storedIngestion } from '../../test/support/events.js';
import { connectTestDatabase, testPostgresUrl } from '../../test/support/postgres.js';
import { indexBuilds, recordingDatabase, type Recorded } from '../../test/support/recordingDatabase.js';
import { describeWith, POSTGRES_SERVER } from '../../test/support/requirements.js';
import { openPglite, type Database } from './database.js';
import { postgresDocumentProjection, postgresReadModels } from './documentReadModels.js';

interface Titled {
  title: string | null;
}

/** Each ingested document's title, under `name`. */
const titles = (name: string): DocumentProjection<Titled> => ({
  name,
  version: 1,
  eventTypes: ['DocumentIngested'],
  documentIds: (event) => [(event.data as { documentId: string }).documentId],
  evolve: (_doc, event) => ({ title: (event.data as { title: string | null }).title }),
});

/**
 * Rebuilds a read model of one document and answers what the swap sent. The swap's transaction
 * holds the live table: an index built inside it would hold every reader for as long as it ran.
 */
const rebuildRecorded = async (db: Database, name: string) => {
  const statements: Recorded[] = [];
  const projection = await postgresDocumentProjection(recordingDatabase(db, statements), titles(name));
  const shadow = await projection.openShadow();
  const event = storedIngestion({ documentId: randomUUID(), title: 'Rebuilt', hashes: ['h'], position: position(1, 1n) });
  await shadow.apply([event], START, event.position);
  statements.length = 0;
  await shadow.promote();
  const indexes = await db.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY 1', [
    `rm_${name}`,
  ]);
  // The containment index answers `find` on the swapped-in copy.
  const found = await postgresReadModels(db).find<Titled>(name, { where: { title: 'Rebuilt' } });
  return { statements, indexes: indexes.map((r) => r.indexname), found: found.items };
};

describe('a document read model rebuilt on the embedded database', () => {
  it('indexes its copy from the start, so that the swap builds no index', async () => {
    const db = await openPglite();
    try {
      const { statements, indexes, found } = await rebuildRecorded(db, 'titles_embedded');
      expect(indexBuilds(statements)).toEqual([]);
      expect(indexes).toEqual(['rm_titles_embedded_doc', 'rm_titles_embedded_pkey']);
      expect(found).toEqual([{ title: 'Rebuilt' }]);
    } finally {
      await db.close();
    }
  });
});

describeWith(POSTGRES_SERVER, 'a document read model rebuilt on a PostgreSQL server', () => {
  it('builds its copy’s index in bulk before the swap, outside the swap’s transaction', async () => {
    const { db, close } = await connectTestDatabase(testPostgresUrl()!, 2);
    try {
      const { statements, indexes, found } = await rebuildRecorded(db, 'titles_server');
      const builds = indexBuilds(statements);
      expect(builds.map((b) => b.inTransaction)).toEqual([false]);
      expect(builds[0]!.sql).toContain('rm_titles_server__shadow_doc');
      expect(indexes).toEqual(['rm_titles_server_doc', 'rm_titles_server_pkey']);
      expect(found).toEqual([{ title: 'Rebuilt' }]);
    } finally {
      await close();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { position, START, type Position } from '../../src/domain/position.js';
import { CheckpointMovedError, type RunnableProjection } from '../../src/ports/projections.js';
import { keywordIndexProjection } from '../../projections/search/keywordIndex.js';
import type { ChunkIndexProjection } from '../../src/ports/searchIndex.js';
import { chunkIdsOf, storedIngestion } from '../../test/support/events.js';
import { indexBuilds, recordingDatabase, type Recorded } from '../../test/support/recordingDatabase.js';
import { openPglite, type Database } from '../postgres/database.js';
import { createPostgresContentStore } from '../postgres/postgresContentStore.js';
import { buildValueIndex, openChunkTableSnapshot, postgresChunkIndexProjection, type ChunkTableSpec } from './postgresChunkIndex.js';
import { WRITE_SLICE, writeSlices } from './writeSlices.js';

/** A chunk table whose value is the chunk's text, indexed by nothing but its key. */
const TEXT_TABLE: ChunkTableSpec<string> = {
  table: 'sliced_text',
  valueType: 'text',
  valueIndex: (table, index) => `CREATE INDEX ${index} ON ${table} (chunk_id)`,
  sqlValue: (_chunk, text) => text,
};
/** The keyword index's declaration (each chunk with its text), under a name of its own. */
const SLICED: ChunkIndexProjection<string> = { ...keywordIndexProjection, name: 'sliced_text', version: 1 };

/** The database, counting the transactions begun through it; `failAt` makes that one (counted from 1) fail. */
const counting = (db: Database) => {
  const seen = { transactions: 0, failAt: 0 };
  const wrapped: Database = {
    ...db,
    query: (sql, params) => db.query(sql, params),
    transaction: (fn) => {
      seen.transactions++;
      if (seen.transactions === seen.failAt) return Promise.reject(new Error('the process died here'));
      return db.transaction(fn);
    },
  };
  return { wrapped, seen };
};

describe('chunk tables written in slices', () => {
  let db: Database;
  let seen: { transactions: number; failAt: number };
  let projection: RunnableProjection;
  let content: Awaited<ReturnType<typeof createPostgresContentStore>>;
  let sequence = 0n;
  const next = (): Position => position(1, (sequence += 1n));

  beforeAll(async () => {
    db = await openPglite();
    const count = counting(db);
    seen = count.seen;
    content = await createPostgresContentStore(db);
    // Whole slices, as a server writes them, so that the counts below are exact whatever the machine's
    // load; how the embedded database sizes its slices by time is writeSlices.unit.spec.ts's.
    projection = await postgresChunkIndexProjection(count.wrapped, content, SLICED, TEXT_TABLE, () => writeSlices(false));
  });
  afterAll(() => db.close());

  const ingested = async (documentId: string, texts: string[], chunkIds?: string[]) =>
    storedIngestion({ documentId, hashes: await content.put(texts), chunkIds, position: next() });
  const rowsOf = (documentId: string) =>
    db.query<{ chunk_id: string; value: string; xmin: string }>(
      'SELECT chunk_id, value, xmin::text FROM sliced_text WHERE document_id = $1 ORDER BY chunk_index',
      [documentId],
    );
  const apply = async (events: StoredEvent[]) => {
    const from = await projection.live.checkpoint();
    await projection.live.apply(events, from, events.at(-1)!.position);
  };
  const texts = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i}`);

  it('writes a large document in transactions of at most WRITE_SLICE rows, and moves the checkpoint with the last', async () => {
    const documentId = randomUUID();
    const event = await ingested(documentId, texts(WRITE_SLICE * 3 + 5, 'large'));
    const before = seen.transactions;
    await apply([event]);
    expect(seen.transactions - before).toBe(4);
    expect(await rowsOf(documentId)).toHaveLength(WRITE_SLICE * 3 + 5);
    expect(await projection.live.checkpoint()).toBe(event.position);
  });

  it('writes nothing of a batch whose checkpoint has moved, however many slices it has', async () => {
    const documentId = randomUUID();
    const event = await ingested(documentId, texts(WRITE_SLICE * 2, 'stale'));
    await expect(projection.live.apply([event], START, event.position)).rejects.toBeInstanceOf(CheckpointMovedError);
    expect(await rowsOf(documentId)).toEqual([]);
  });

  it('applies a batch cut short after its first slices whole when it runs again from its checkpoint', async () => {
    const documentId = randomUUID();
    const first = await ingested(documentId, texts(WRITE_SLICE * 3, 'old'));
    await apply([first]);
    const checkpoint = await projection.live.checkpoint();

    // The first two chunks keep their ids; the rest are new.
    const kept = chunkIdsOf(first).slice(0, 2);
    const second = await ingested(documentId, texts(WRITE_SLICE + 3, 'new'), kept);
    seen.failAt = seen.transactions + 2;
    await expect(apply([second])).rejects.toThrow('the process died here');
    seen.failAt = 0;
    expect(await projection.live.checkpoint()).toBe(checkpoint);

    await apply([second]);
    const rows = await rowsOf(documentId);
    expect(rows.map((r) => r.value)).toEqual(texts(WRITE_SLICE + 3, 'new'));
    expect(rows.slice(0, 2).map((r) => r.chunk_id)).toEqual(kept);
    expect(await projection.live.checkpoint()).toBe(second.position);
  });

  it('stores each chunk with its own title and tags, those holding quotes, commas and braces included', async () => {
    const [plain, quoted] = [randomUUID(), randomUUID()];
    const tags = ['a,b', '"quoted"', '{braces}', 'back\\slash', ''];
    const events = [
      storedIngestion({ documentId: plain, hashes: await content.put(['plain']), position: next() }),
      storedIngestion({ documentId: quoted, hashes: await content.put(['x', 'y']), tags, title: 'It\'s "one"', position: next() }),
    ];
    await apply(events);
    const rows = await db.query<{ document_id: string; title: string | null; tags: string[] }>(
      'SELECT document_id, title, tags FROM sliced_text WHERE document_id = ANY($1::text[]) ORDER BY document_id, chunk_index',
      [[plain, quoted]],
    );
    expect(rows.filter((r) => r.document_id === plain).map((r) => [r.title, r.tags])).toEqual([[null, []]]);
    expect(rows.filter((r) => r.document_id === quoted).map((r) => [r.title, r.tags])).toEqual([
      ['It\'s "one"', tags],
      ['It\'s "one"', tags],
    ]);
  });

  it('leaves a row as it is when a batch gives it again unchanged', async () => {
    const documentId = randomUUID();
    const event = await ingested(documentId, texts(3, 'same'));
    await apply([event]);
    const before = await rowsOf(documentId);
    await apply([{ ...event, position: next() }]);
    expect(await rowsOf(documentId)).toEqual(before);
  });
});

describe('a value index built in bulk', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite();
  });
  afterAll(() => db.close());

  /** Builds through a spec whose "index" records the maintenance_work_mem it was built with, in kB. */
  const builtWith = async (buildMemoryMb: number | undefined, table: string) => {
    await buildValueIndex(
      db,
      {
        valueIndex: (t) => `CREATE TABLE ${t} AS SELECT setting::bigint AS kb FROM pg_settings WHERE name = 'maintenance_work_mem'`,
        ...(buildMemoryMb === undefined ? {} : { buildMemoryMb }),
      },
      table,
      `${table}_value`,
    );
    const [row] = await db.query<{ kb: string }>(`SELECT kb::text FROM ${table}`);
    return Number(row!.kb);
  };
  const sessionKb = async () =>
    Number((await db.query<{ kb: string }>(`SELECT setting AS kb FROM pg_settings WHERE name = 'maintenance_work_mem'`))[0]!.kb);

  it('is built with the memory its spec asks for, in its own transaction only', async () => {
    const before = await sessionKb();
    expect(await builtWith(512, 'built_large')).toBe(512 * 1024);
    expect(await sessionKb()).toBe(before);
    expect(await builtWith(undefined, 'built_default')).toBe(before);
  });

  it('keeps a larger setting than its spec asks for', async () => {
    await db.exec(`SET maintenance_work_mem = '1GB'`);
    try {
      expect(await builtWith(512, 'built_under_setting')).toBe(1024 * 1024);
    } finally {
      await db.exec('RESET maintenance_work_mem');
    }
  });
});

describe('a rebuild on the embedded database', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite();
  });
  afterAll(() => db.close());

  const indexesOf = async (table: string, schema = 'public') =>
    (
      await db.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE tablename = $1 AND schemaname = $2', [table, schema])
    ).map((r) => r.indexname);

  it('indexes its copy from the start, so that the swap builds no index while searches wait', async () => {
    // One connection: a bulk build at the swap would hold every search for as long as it ran.
    const statements: Recorded[] = [];
    const content = await createPostgresContentStore(db);
    const projection = await postgresChunkIndexProjection(recordingDatabase(db, statements), content, SLICED, TEXT_TABLE);
    const shadow = await projection.openShadow();
    expect(await indexesOf('sliced_text__shadow')).toContain('sliced_text__shadow_value');

    const documentId = randomUUID();
    const event = storedIngestion({ documentId, hashes: await content.put(['rebuilt text']), position: position(1, 1n) });
    await shadow.apply([event], START, event.position);
    statements.length = 0;
    await shadow.promote();

    expect(indexBuilds(statements)).toEqual([]);
    expect(await indexesOf('sliced_text')).toContain('sliced_text_value');
    expect(await db.query('SELECT value FROM sliced_text WHERE document_id = $1', [documentId])).toEqual([{ value: 'rebuilt text' }]);
  });

  it('indexes a time-travel snapshot as it loads too, so that sealing it builds no index while searches wait', async () => {
    const statements: Recorded[] = [];
    const content = await createPostgresContentStore(db);
    await db.exec('CREATE SCHEMA snapshot_indexed');
    const snapshot = await openChunkTableSnapshot(recordingDatabase(db, statements), content, SLICED, TEXT_TABLE, 'snapshot_indexed', {
      valueIndex: true,
    });
    expect(await indexesOf('sliced_text', 'snapshot_indexed')).toContain('sliced_text_value');

    const event = storedIngestion({ documentId: randomUUID(), hashes: await content.put(['text as it was']), position: position(1, 1n) });
    await snapshot.sink.apply([event], START, event.position);
    statements.length = 0;
    await snapshot.seal();

    expect(indexBuilds(statements)).toEqual([]);
    expect(await db.query(`SELECT value FROM ${snapshot.table}`)).toEqual([{ value: 'text as it was' }]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import type { OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { EVENT_STORE_SCHEMA } from '../eventstore/postgresSchema.js';
import { openTestLedger } from '../../test/support/ledger.js';
import { connectTestDatabase, testPostgresUrl } from '../../test/support/postgres.js';
import { describeWith, POSTGRES_SERVER } from '../../test/support/requirements.js';
import type { Database } from './database.js';
import { createPostgresContentStore } from './postgresContentStore.js';

const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

/** The payload columns, which ANALYZE leaves out, and a key column of each table, which it keeps. */
const PAYLOADS = [
  ['search_keyword', 'value'],
  ['content_blobs', 'content'],
  ['ledger_events', 'data'],
  ['ledger_events', 'metadata'],
];
const KEYS = [
  ['search_keyword', 'project'],
  ['content_blobs', 'hash'],
  ['ledger_events', 'event_type'],
];

/** The `table.column` pairs of `pairs` that ANALYZE gathered statistics for. */
const analyzed = async (db: Database, pairs: string[][]) => {
  const rows = await db.query<{ name: string }>(
    `SELECT tablename || '.' || attname AS name FROM pg_stats
     WHERE schemaname = 'public' AND (tablename, attname) IN (${pairs.map(([t, c]) => `('${t}', '${c}')`).join(', ')})
     ORDER BY 1`,
  );
  return rows.map((r) => r.name);
};

describe('statistics on the embedded database', () => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await openTestLedger({ CTX_EMBEDDINGS__PROVIDER: 'none' });
    await ledger.operation('documents.ingest_batch').run(
      {
        source: 'notes',
        documents: Array.from({ length: 20 }, (_, i) => ({
          source_id: `note-${i}.md`,
          title: `Note ${i}`,
          body: `Token refresh rotates the signing key, note ${i}.`,
        })),
      },
      context(),
    );
    await ledger.catchUp();
  }, 60_000);
  afterAll(async () => ledger.close());

  // The embedded database analyzes its tables itself as they grow, and every search waits meanwhile.
  it('are gathered for the columns queries filter on, not for the payloads, in a rebuilt copy too', async () => {
    await ledger.operation('projections.rebuild').run({ name: 'keyword' }, context());
    await ledger.db.exec('ANALYZE');
    expect(await analyzed(ledger.db, PAYLOADS)).toEqual([]);
    expect(await analyzed(ledger.db, KEYS)).toEqual(['content_blobs.hash', 'ledger_events.event_type', 'search_keyword.project']);
    const found = (await ledger.operation('search').run({ query: 'signing key', mode: 'keyword', limit: 5 }, context())) as {
      results: unknown[];
    };
    expect(found.results).toHaveLength(5);
  });
});

describeWith(POSTGRES_SERVER, 'statistics on a PostgreSQL server', () => {
  it('are not gathered for the event store’s and the content store’s payloads, however often the stores open', async () => {
    const { db, close } = await connectTestDatabase(testPostgresUrl()!, 1);
    try {
      for (let opened = 0; opened < 2; opened++) {
        await db.exec(EVENT_STORE_SCHEMA);
        await createPostgresContentStore(db);
      }
      const targets = await db.query<{ name: string; target: number | null }>(
        `SELECT attrelid::regclass::text || '.' || attname AS name, attstattarget AS target FROM pg_attribute
         WHERE attrelid IN ('ledger_events'::regclass, 'content_blobs'::regclass) AND attname IN ('data', 'metadata', 'content', 'hash')
         ORDER BY 1`,
      );
      // Unset is -1 before PostgreSQL 17, NULL from 17 on.
      expect(targets.map((t) => [t.name, t.target === 0])).toEqual([
        ['content_blobs.content', true],
        ['content_blobs.hash', false],
        ['ledger_events.data', true],
        ['ledger_events.metadata', true],
      ]);
    } finally {
      await close();
    }
  });
});

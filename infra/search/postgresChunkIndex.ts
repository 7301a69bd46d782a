import type { SearchChunk } from '../../src/domain/searchChunks.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { START, type Position } from '../../src/domain/position.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import {
  CheckpointMovedError,
  handle,
  type ProjectionSink,
  type RunnableProjection,
  type ShadowSink,
} from '../../src/ports/projections.js';
import type { ChunkIndexProjection, PendingChunk, Resumption, SearchFilters } from '../../src/ports/searchIndex.js';
import type { Sql } from '../../src/ports/database.js';
import { indexesCopiesFirst, searchesWaitForWrites, type Database } from '../postgres/database.js';
import { projectionCheckpoints } from '../postgres/checkpoints.js';
import { writingProjection } from '../postgres/dataErrors.js';
import { lastChanges } from './chunkChanges.js';
import { writeSlices, type WriteSlices } from './writeSlices.js';

/** How one chunk table stores a projection's values, and how it indexes them. */
export interface ChunkTableSpec<Value> {
  table: string;
  /** Column definition of `value`, e.g. `text` or `vector(384)`. */
  valueType: string;
  /** Index over `value`, named `index`, on `table`. */
  valueIndex(table: string, index: string): string;
  /** The projection's value of `chunk` as the column's text. */
  sqlValue(chunk: SearchChunk, value: Value): string;
  /**
   * Memory (MB) the value index may take while it is built in bulk, at the least. A graph index
   * built in memory is built many times faster than one that has outgrown it and goes to disk.
   */
  buildMemoryMb?: number;
}

/** What every chunk row holds beside its value: enough to filter, rank and show a result. */
const CHUNK_COLUMNS = `
  chunk_id text PRIMARY KEY,
  document_id text NOT NULL,
  project text NOT NULL,
  source text NOT NULL,
  source_id text NOT NULL,
  title text,
  tags text[] NOT NULL,
  updated_at timestamptz NOT NULL,
  chunk_index integer NOT NULL`;

/** `table` may be schema-qualified; its indexes are then created in that schema. */
const columns = (table: string, valueType: string) => `
CREATE TABLE IF NOT EXISTS ${table} (${CHUNK_COLUMNS},
  value ${valueType} NOT NULL
);
CREATE INDEX IF NOT EXISTS ${unqualified(table)}_document ON ${table} (document_id);`;

/** The chunks of `table` set aside without a value, with what computing it later needs. */
export const deferredTableOf = (table: string) => `${table}_deferred`;

const deferredColumns = (table: string) => {
  const deferred = deferredTableOf(table);
  return `
CREATE TABLE IF NOT EXISTS ${deferred} (${CHUNK_COLUMNS},
  text_hash text NOT NULL,
  deferred_for text NOT NULL
);
CREATE INDEX IF NOT EXISTS ${unqualified(deferred)}_key ON ${deferred} (project, deferred_for);
CREATE INDEX IF NOT EXISTS ${unqualified(deferred)}_document ON ${deferred} (document_id);`;
};

const unqualified = (table: string) => table.slice(table.lastIndexOf('.') + 1);

/** The table a rebuild fills beside `table`, then swaps in for it. */
export const shadowTableOf = (table: string) => `${table}__shadow`;

/** The value index of `table`, qualified by the table's schema when it has one. */
export const valueIndexName = (table: string) => `${table}_value`;

/**
 * Builds the value index of `table` in bulk, with at least `spec.buildMemoryMb` of
 * maintenance_work_mem for its own transaction (a larger setting stays as it is).
 */
export const buildValueIndex = (
  db: Database,
  spec: Pick<ChunkTableSpec<unknown>, 'valueIndex' | 'buildMemoryMb'>,
  table: string,
  index: string,
) =>
  db.transaction(async (tx) => {
    if (spec.buildMemoryMb)
      await tx.query(
        `SELECT set_config('maintenance_work_mem', $1 || 'MB', true) FROM pg_settings
          WHERE name = 'maintenance_work_mem' AND setting::bigint < $1::bigint * 1024`,
        [spec.buildMemoryMb],
      );
    await tx.query(spec.valueIndex(table, index));
  });

const COLUMNS = ['document_id', 'project', 'source', 'source_id', 'title', 'tags', 'updated_at', 'chunk_index', 'value'];

/** Removes the rows of `documentIds` that are not among `keep`: chunks the documents no longer have. */
const deleteStale = (tx: Sql, table: string, documentIds: string[], keep: string[]) =>
  tx.query(`DELETE FROM ${table} WHERE document_id = ANY($1::text[]) AND NOT (chunk_id = ANY($2::text[]))`, [
    documentIds,
    keep,
  ]);

/** The columns every chunk row has, as one array per column (tags, an array each, as one JSON array). */
const chunkArrays = (chunks: readonly SearchChunk[]) => ({
  columns: [
    chunks.map((c) => c.chunkId),
    chunks.map((c) => c.documentId),
    chunks.map((c) => c.project),
    chunks.map((c) => c.source),
    chunks.map((c) => c.sourceId),
    chunks.map((c) => c.title),
    chunks.map((c) => c.updatedAt),
    chunks.map((c) => c.chunkIndex),
  ],
  tags: JSON.stringify(chunks.map((c) => c.tags)),
});

/**
 * Inserts or replaces rows; a row that is already as given is left alone, and its index entries with
 * it. The rows go as one array per column (tags, an array each, as one JSON array beside them): the
 * database reads arrays far faster than a JSON document of records.
 */
const upsert = async (tx: Sql, table: string, valueType: string, chunks: SearchChunk[], values: string[]) => {
  if (chunks.length === 0) return;
  const current = (prefix: string) => COLUMNS.map((column) => `${prefix}.${column}`).join(', ');
  const { columns, tags } = chunkArrays(chunks);
  await tx.query(
    `INSERT INTO ${table} AS t SELECT x.chunk_id, x.document_id, x.project, x.source, x.source_id, x.title,
       ARRAY(SELECT jsonb_array_elements_text($10::jsonb -> (x.n::int - 1))), x.updated_at, x.chunk_index,
       x.value::${valueType}
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
       $8::integer[], $9::text[]) WITH ORDINALITY
       AS x(chunk_id, document_id, project, source, source_id, title, updated_at, chunk_index, value, n)
     ON CONFLICT (chunk_id) DO UPDATE SET (${COLUMNS.join(', ')}) = (${current('excluded')})
     WHERE (${current('t')}) IS DISTINCT FROM (${current('excluded')})`,
    [...columns, values, tags],
  );
};

const DEFERRED_COLUMNS = [...COLUMNS.slice(0, -1), 'text_hash', 'deferred_for'];

/** Sets chunks aside without a value, each under the key that brings it back. */
const upsertDeferred = async (tx: Sql, table: string, rows: readonly { chunk: SearchChunk; key: string }[]) => {
  if (rows.length === 0) return;
  const { columns, tags } = chunkArrays(rows.map((r) => r.chunk));
  await tx.query(
    `INSERT INTO ${table} SELECT x.chunk_id, x.document_id, x.project, x.source, x.source_id, x.title,
       ARRAY(SELECT jsonb_array_elements_text($11::jsonb -> (x.n::int - 1))), x.updated_at, x.chunk_index,
       x.text_hash, x.deferred_for
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
       $8::integer[], $9::text[], $10::text[]) WITH ORDINALITY
       AS x(chunk_id, document_id, project, source, source_id, title, updated_at, chunk_index, text_hash, deferred_for, n)
     ON CONFLICT (chunk_id) DO UPDATE SET (${DEFERRED_COLUMNS.join(', ')}) =
       (${DEFERRED_COLUMNS.map((column) => `excluded.${column}`).join(', ')})`,
    [...columns, rows.map((r) => r.chunk.textHash), rows.map((r) => r.key), tags],
  );
};

type Resume = Resumption & { position: Position };

/** The set-aside chunks `resumes` bring back, as the last of them for each key asks; documents the batch changes are left out. */
const readResumed = async (
  db: Database,
  table: string,
  resumes: readonly Resume[],
  changed: string[],
): Promise<PendingChunk[]> => {
  const last = new Map(resumes.map((r) => [`${r.project}\u0000${r.key}`, r]));
  const asked = [...last.values()];
  const rows = await db.query<SearchChunk & { n: number }>(
    `SELECT d.chunk_id AS "chunkId", d.document_id AS "documentId", d.project, d.source, d.source_id AS "sourceId",
       d.title, d.tags, d.updated_at::text AS "updatedAt", d.chunk_index AS "chunkIndex", d.text_hash AS "textHash",
       r.n::int AS n
     FROM ${table} d JOIN unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(project, key, n)
       ON d.project = r.project AND d.deferred_for = r.key
     WHERE NOT (d.document_id = ANY($3::text[]))
     ORDER BY d.document_id, d.chunk_index`,
    [asked.map((r) => r.project), asked.map((r) => r.key), changed],
  );
  return rows.map(({ n, ...chunk }) => ({ chunk, workId: asked[n - 1]!.workId, position: asked[n - 1]!.position }));
};

/** Where a batch stands against the stored checkpoint: checked before its first write, moved with its last. */
interface BatchCheckpoint {
  check(tx: Sql): Promise<void>;
  advance(tx: Sql): Promise<void>;
}

/**
 * Applies a batch to a chunk table. Values are computed first (embedding can be slow); then the rows
 * are written in slices (`writeSlices`), each in its own transaction: the first checks the
 * checkpoint, so that a batch another runner has applied writes nothing, and the last moves it.
 * Every slice is idempotent, so a batch cut short by a crash is written again whole from its
 * checkpoint; until then a search may see part of a document's new chunks beside its old ones.
 * When the projection sets chunks aside, they go to the deferred table with the first slice, and a
 * chunk brought back leaves it in the slice that writes its value.
 */
const applyChanges = async <Value>(
  db: Database,
  content: ContentStore,
  projection: ChunkIndexProjection<Value>,
  spec: ChunkTableSpec<Value>,
  target: string,
  events: readonly StoredEvent[],
  checkpoint: BatchCheckpoint,
  slices: WriteSlices,
) => {
  const setsAside = projection.resumes !== undefined;
  const deferredTable = deferredTableOf(target);
  const changes = lastChanges(projection, events);
  const documents = [...changes.keys()];
  const resumes: Resume[] = events.flatMap((event) => {
    const resume = projection.resumes && handle(event, () => projection.resumes!(event));
    return resume ? [{ ...resume, position: event.position }] : [];
  });
  const resumed = resumes.length > 0 ? await readResumed(db, deferredTable, resumes, documents) : [];
  const pending = [...[...changes.values()].flat(), ...resumed];
  const texts = await content.get(pending.map((p) => p.chunk.textHash));
  const present = pending.filter((p) => texts.has(p.chunk.textHash));
  const { indexed, values, setAside } = await projection.index(present, texts, resumes);
  const sqlValues = indexed.map((chunk, i) => spec.sqlValue(chunk, values[i]!));
  for (let start = 0; ; ) {
    const end = Math.min(indexed.length, start + slices.next());
    const [first, last] = [start === 0, end === indexed.length];
    const rows = indexed.slice(start, end);
    await writingProjection(() =>
      db.transaction(async (tx) => {
        await (last ? checkpoint.advance(tx) : first ? checkpoint.check(tx) : undefined);
        if (first && changes.size > 0)
          await deleteStale(tx, target, documents, indexed.map((c) => c.chunkId));
        if (first && setsAside) {
          if (changes.size > 0)
            await tx.query(`DELETE FROM ${deferredTable} WHERE document_id = ANY($1::text[])`, [documents]);
          await upsertDeferred(tx, deferredTable, setAside);
        }
        const writing = performance.now();
        await upsert(tx, target, spec.valueType, rows, sqlValues.slice(start, end));
        slices.took(rows.length, performance.now() - writing);
        if (setsAside && rows.length > 0)
          await tx.query(`DELETE FROM ${deferredTable} WHERE chunk_id = ANY($1::text[])`, [rows.map((c) => c.chunkId)]);
      }),
    );
    if (last) return;
    start = end;
  }
};

/**
 * A search index projection kept in a Postgres table of chunks (see applyChanges), its checkpoint
 * under the projection's name.
 */
export const postgresChunkIndexProjection = async <Value>(
  db: Database,
  content: ContentStore,
  projection: ChunkIndexProjection<Value>,
  spec: ChunkTableSpec<Value>,
  slicing: () => WriteSlices = () => writeSlices(searchesWaitForWrites(db)),
): Promise<RunnableProjection> => {
  const { name, version } = projection;
  const { table } = spec;
  const shadowTable = shadowTableOf(table);
  const checkpoints = projectionCheckpoints(db, name, version);
  await checkpoints.register();
  const setsAside = projection.resumes !== undefined;
  // A bulk build at the swap: 59 s for the HNSW graph of 115,749 real embeddings, against 448 s row by
  // row; but 64 s of every search waiting on the embedded database (41 s for the BM25 index of 100,000).
  const indexFirst = indexesCopiesFirst(db);
  const deferredTables = (of: string) => (setsAside ? deferredColumns(of) : '');
  await db.exec(
    columns(table, spec.valueType) +
      spec.valueIndex(table, valueIndexName(table)).replace('CREATE INDEX', 'CREATE INDEX IF NOT EXISTS') +
      `;${deferredTables(table)}`,
  );

  const sink = (target: string, slot: 'live' | 'shadow'): ProjectionSink => {
    const slices = slicing();
    return {
      checkpoint: () => checkpoints.read(slot),
      apply: (events, from, to) =>
        applyChanges(
          db,
          content,
          projection,
          spec,
          target,
          events,
          {
            check: (tx) => checkpoints.advance(tx, slot, from, from),
            advance: (tx) => checkpoints.advance(tx, slot, from, to),
          },
          slices,
        ),
      quarantine: (event, error, from, to) => checkpoints.quarantine(slot, event, error, from, to),
    };
  };

  return {
    name,
    version,
    eventTypes: projection.eventTypes,
    ...(projection.computes ? { computes: true } : {}),
    live: sink(table, 'live'),
    liveVersion: () => checkpoints.liveVersion(),
    quarantined: () => checkpoints.quarantined(),
    openShadow: async (): Promise<ShadowSink> => {
      await db.exec(
        `DROP TABLE IF EXISTS ${shadowTable}; DROP TABLE IF EXISTS ${deferredTableOf(shadowTable)};
         ${columns(shadowTable, spec.valueType)} ${deferredTables(shadowTable)}
         ${indexFirst ? `${spec.valueIndex(shadowTable, valueIndexName(shadowTable))};` : ''}`,
      );
      await db.transaction((tx) => checkpoints.resetShadow(tx));
      return {
        ...sink(shadowTable, 'shadow'),
        promote: async () => {
          if (!indexFirst) await buildValueIndex(db, spec, shadowTable, valueIndexName(shadowTable));
          await db.transaction(async (tx) => {
            await tx.query(`DROP TABLE ${table}`);
            await tx.query(`ALTER TABLE ${shadowTable} RENAME TO ${table}`);
            await tx.query(`ALTER INDEX ${valueIndexName(shadowTable)} RENAME TO ${valueIndexName(table)}`);
            await tx.query(`ALTER INDEX ${shadowTable}_document RENAME TO ${table}_document`);
            await tx.query(`ALTER INDEX ${shadowTable}_pkey RENAME TO ${table}_pkey`);
            if (setsAside) {
              const [deferred, shadowDeferred] = [deferredTableOf(table), deferredTableOf(shadowTable)];
              await tx.query(`DROP TABLE ${deferred}`);
              await tx.query(`ALTER TABLE ${shadowDeferred} RENAME TO ${deferred}`);
              for (const suffix of ['pkey', 'key', 'document'])
                await tx.query(`ALTER INDEX ${shadowDeferred}_${suffix} RENAME TO ${deferred}_${suffix}`);
            }
            await checkpoints.promoteShadow(tx);
          });
        },
        discard: () =>
          db.transaction(async (tx) => {
            await tx.query(`DROP TABLE IF EXISTS ${shadowTable}`);
            await tx.query(`DROP TABLE IF EXISTS ${deferredTableOf(shadowTable)}`);
            await checkpoints.dropShadow(tx);
          }),
      };
    },
  };
};

/** The same chunk table as a projection keeps, built apart in a schema of its own. */
export interface ChunkTableSnapshot {
  /** The schema-qualified table. */
  table: string;
  /** Fed in order by one caller; its checkpoint lives in memory, as a snapshot is never resumed. */
  sink: ProjectionSink;
  /** After the last batch: builds the value index in bulk, when the snapshot has one not built as it loaded. */
  seal(): Promise<void>;
}

/**
 * Opens an empty copy of a chunk table in `schema` (which must exist), written by the projection's
 * own code. Without `valueIndex`, queries scan the table: exact, and for a model that answers a
 * handful of queries cheaper than building a vector graph.
 */
export const openChunkTableSnapshot = async <Value>(
  db: Database,
  content: ContentStore,
  projection: ChunkIndexProjection<Value>,
  spec: ChunkTableSpec<Value>,
  schema: string,
  { valueIndex }: { valueIndex: boolean },
): Promise<ChunkTableSnapshot> => {
  const table = `${schema}.${spec.table}`;
  const indexFirst = valueIndex && indexesCopiesFirst(db);
  await db.exec(
    columns(table, spec.valueType) + (indexFirst ? `${spec.valueIndex(table, unqualified(valueIndexName(table)))};` : ''),
  );
  let checkpoint = START;
  const slices = writeSlices(searchesWaitForWrites(db));
  return {
    table,
    sink: {
      checkpoint: () => Promise.resolve(checkpoint),
      apply: async (events, from, to) => {
        if (from !== checkpoint)
          throw new CheckpointMovedError(`Snapshot of '${projection.name}' is at ${checkpoint}, not ${from}`);
        await applyChanges(db, content, projection, spec, table, events, { check: async () => {}, advance: async () => {} }, slices);
        checkpoint = to;
      },
      // A snapshot is thrown away after use: what it skipped is only logged by its builder.
      quarantine: (_event, _error, from, to) => {
        if (from !== checkpoint)
          return Promise.reject(new CheckpointMovedError(`Snapshot of '${projection.name}' is at ${checkpoint}, not ${from}`));
        checkpoint = to;
        return Promise.resolve();
      },
    },
    seal: async () => {
      if (valueIndex && !indexFirst) await buildValueIndex(db, spec, table, unqualified(valueIndexName(table)));
    },
  };
};

/** SQL conditions for the common filters; parameters are appended to `params`. */
export const filterConditions = (filters: SearchFilters, params: unknown[]): string[] => {
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    return sql(`$${params.length}`);
  };
  const where = [add((p) => `project = ${p}`, filters.project)];
  if (filters.source) where.push(add((p) => `source = ${p}`, filters.source));
  if (filters.tags?.length) where.push(add((p) => `tags @> ${p}::text[]`, filters.tags));
  if (filters.since) where.push(add((p) => `updated_at >= ${p}::timestamptz`, filters.since));
  if (filters.until) where.push(add((p) => `updated_at <= ${p}::timestamptz`, filters.until));
  return where;
};

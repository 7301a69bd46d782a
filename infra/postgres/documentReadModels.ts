import type { StoredEvent } from '../../src/domain/events.js';
import { ValidationError } from '../../src/errors.js';
import {
  handle,
  type DocumentProjection,
  type FindQuery,
  type OnlyElements,
  type ProjectionSink,
  type ReadModels,
  type RunnableProjection,
  type ShadowSink,
} from '../../src/ports/projections.js';
import { projectionCheckpoints } from './checkpoints.js';
import { writingProjection } from './dataErrors.js';
import type { Sql } from '../../src/ports/database.js';
import { indexesCopiesFirst, type Database } from './database.js';

const COLLECTION = /^[a-z][a-z0-9_]{0,40}$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const checked = (pattern: RegExp, name: string): string => {
  if (!pattern.test(name)) throw new ValidationError(`Not a valid read model or field name: '${name}'`);
  return name;
};

const tableOf = (collection: string) => `rm_${checked(COLLECTION, collection)}`;
const SHADOW = '__shadow';

/** The index that answers `find`'s containment filters. */
const docIndex = (table: string) => `CREATE INDEX IF NOT EXISTS ${table}_doc ON ${table} USING gin (doc jsonb_path_ops)`;

const createTable = (table: string) => `
CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, doc jsonb NOT NULL);
${docIndex(table)};`;

/**
 * Applies a batch to a document table: loads every touched document once, and writes each once
 * in the statement that moves the checkpoint, so the writes land only if the checkpoint moves.
 * The documents are read outside that statement: a runner that changed them since would have
 * moved the checkpoint first.
 */
const applyToTable = async <Doc>(
  db: Sql,
  table: string,
  projection: DocumentProjection<Doc>,
  events: readonly StoredEvent[],
  moved: (params: unknown[]) => string,
): Promise<boolean> => {
  const handled = new Set<string>(projection.eventTypes);
  const relevant = events.filter((e) => handled.has(e.type));
  const idsOf = new Map(relevant.map((e) => [e, handle(e, () => projection.documentIds(e))]));
  const ids = [...new Set([...idsOf.values()].flat())];
  const rows =
    ids.length === 0
      ? []
      : await db.query<{ id: string; doc: Doc }>(`SELECT id, doc FROM ${table} WHERE id = ANY($1::text[])`, [ids]);
  const docs = new Map<string, Doc | null>(rows.map((r) => [r.id, r.doc]));
  for (const event of relevant) {
    for (const id of idsOf.get(event)!) {
      docs.set(id, handle(event, () => projection.evolve(docs.get(id) ?? null, event, id)));
    }
  }
  const upserts = [...docs].filter(([, doc]) => doc !== null).map(([id, doc]) => ({ id, doc }));
  const deletes = [...docs].filter(([, doc]) => doc === null).map(([id]) => id);
  const params: unknown[] = [];
  const cte = moved(params);
  params.push(JSON.stringify(upserts), deletes);
  const [applied] = await db.query<{ moved: number }>(
    `WITH ${cte},
     upserted AS (
       INSERT INTO ${table} (id, doc)
       SELECT x.id, x.doc FROM jsonb_to_recordset($${params.length - 1}::jsonb) AS x(id text, doc jsonb)
       WHERE EXISTS (SELECT 1 FROM moved)
       ON CONFLICT (id) DO UPDATE SET doc = excluded.doc),
     deleted AS (DELETE FROM ${table} WHERE id = ANY($${params.length}::text[]) AND EXISTS (SELECT 1 FROM moved))
     SELECT count(*)::int AS moved FROM moved`,
    params,
  );
  return applied?.moved === 1;
};

/** Runs a document projection on Postgres: batch and checkpoint commit in one statement. */
export const postgresDocumentProjection = async <Doc>(
  db: Database,
  projection: DocumentProjection<Doc>,
): Promise<RunnableProjection> => {
  const { name, version } = projection;
  const live = tableOf(name);
  const shadow = `${live}${SHADOW}`;
  const checkpoints = projectionCheckpoints(db, name, version);
  await checkpoints.register();
  await db.exec(createTable(live));
  // A copy's containment index is built before the swap, never in it: the swap's transaction holds
  // the live table, and every read of it would wait (20 s for a million documents).
  const indexFirst = indexesCopiesFirst(db);

  const sink = (table: string, slot: 'live' | 'shadow'): ProjectionSink => ({
    checkpoint: () => checkpoints.read(slot),
    apply: async (events, from, to) => {
      const moved = (params: unknown[]) => checkpoints.movedCte(slot, from, to, params);
      const applied = await writingProjection(() => applyToTable(db, table, projection, events, moved));
      if (!applied) throw checkpoints.movedError(slot, from);
    },
    quarantine: (event, error, from, to) => checkpoints.quarantine(slot, event, error, from, to),
  });

  return {
    name,
    version,
    eventTypes: projection.eventTypes,
    live: sink(live, 'live'),
    liveVersion: () => checkpoints.liveVersion(),
    quarantined: () => checkpoints.quarantined(),
    openShadow: async (): Promise<ShadowSink> => {
      await db.transaction(async (tx) => {
        await tx.query(`DROP TABLE IF EXISTS ${shadow}`);
        await tx.query(`CREATE TABLE ${shadow} (id text PRIMARY KEY, doc jsonb NOT NULL)`);
        if (indexFirst) await tx.query(docIndex(shadow));
        await checkpoints.resetShadow(tx);
      });
      return {
        ...sink(shadow, 'shadow'),
        promote: async () => {
          if (!indexFirst) await db.exec(docIndex(shadow));
          await db.transaction(async (tx) => {
            await tx.query(`DROP TABLE ${live}`);
            await tx.query(`ALTER TABLE ${shadow} RENAME TO ${live}`);
            await tx.query(`ALTER INDEX ${shadow}_pkey RENAME TO ${live}_pkey`);
            await tx.query(`ALTER INDEX ${shadow}_doc RENAME TO ${live}_doc`);
            await checkpoints.promoteShadow(tx);
          });
        },
        discard: () =>
          db.transaction(async (tx) => {
            await tx.query(`DROP TABLE IF EXISTS ${shadow}`);
            await checkpoints.dropShadow(tx);
          }),
      };
    },
  };
};

/** Documents whose top-level fields include `$1` (a JSON object), or all when `$1` is null. */
const CONTAINS = 'WHERE ($1::jsonb IS NULL OR doc @> $1::jsonb)';

const containment = (where: FindQuery['where']): string | null =>
  where && Object.keys(where).length > 0 ? JSON.stringify(where) : null;

/** Query face over document read models. */
export const postgresReadModels = (db: Sql): ReadModels => ({
  async get<Doc>(collection: string, id: string) {
    const [row] = await db.query<{ doc: Doc }>(`SELECT doc FROM ${tableOf(collection)} WHERE id = $1`, [id]);
    return row?.doc ?? null;
  },
  async getMany<Doc>(collection: string, ids: readonly string[], only?: OnlyElements) {
    if (ids.length === 0) return new Map<string, Doc>();
    const field = only && checked(FIELD, only.field);
    const rows = await db.query<{ id: string; doc: Doc }>(
      only
        ? `SELECT id, jsonb_set(doc, '{${field}}', COALESCE((SELECT jsonb_agg(element ORDER BY n) FROM
             jsonb_array_elements(doc->'${field}') WITH ORDINALITY AS e(element, n) WHERE element->>'id' = ANY($2::text[])), '[]'))
           AS doc FROM ${tableOf(collection)} WHERE id = ANY($1::text[])`
        : `SELECT id, doc FROM ${tableOf(collection)} WHERE id = ANY($1::text[])`,
      only ? [[...new Set(ids)], [...new Set(only.ids)]] : [[...new Set(ids)]],
    );
    return new Map(rows.map((r) => [r.id, r.doc]));
  },
  async find<Doc>(collection: string, query: FindQuery = {}) {
    const table = tableOf(collection);
    const filter = containment(query.where);
    const order = (query.orderBy ?? []).map((o) => `doc->'${checked(FIELD, o.field)}' ${o.direction === 'desc' ? 'DESC' : 'ASC'}`);
    const rows = await db.query<{ doc: Doc }>(
      `SELECT doc FROM ${table} ${CONTAINS} ORDER BY ${[...order, 'id'].join(', ')} LIMIT $2 OFFSET $3`,
      [filter, query.limit ?? null, query.offset ?? 0],
    );
    const [count] = await db.query<{ total: string }>(`SELECT count(*)::text AS total FROM ${table} ${CONTAINS}`, [filter]);
    return { items: rows.map((r) => r.doc), total: Number(count?.total ?? 0) };
  },
  async count(collection: string, field: string, where?: FindQuery['where']) {
    const filter = containment(where);
    const rows = await db.query<{ value: string; total: string }>(
      `SELECT doc->>'${checked(FIELD, field)}' AS value, count(*)::text AS total FROM ${tableOf(collection)}
       ${CONTAINS} GROUP BY 1`,
      [filter],
    );
    return new Map(rows.map((r) => [r.value, Number(r.total)]));
  },
});

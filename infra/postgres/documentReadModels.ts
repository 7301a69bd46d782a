import { START, type Position } from '../../src/domain/position.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { ValidationError } from '../../src/errors.js';
import {
  CheckpointMovedError,
  type DocumentProjection,
  type FindQuery,
  type ProjectionSink,
  type ReadModels,
  type RunnableProjection,
  type ShadowSink,
} from '../../src/ports/projections.js';
import type { Database, Sql } from './database.js';

const COLLECTION = /^[a-z][a-z0-9_]{0,40}$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const checked = (pattern: RegExp, name: string): string => {
  if (!pattern.test(name)) throw new ValidationError(`Not a valid read model or field name: '${name}'`);
  return name;
};

const tableOf = (collection: string) => `rm_${checked(COLLECTION, collection)}`;
const SHADOW = '__shadow';

export const CHECKPOINTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name text NOT NULL,
  slot text NOT NULL CHECK (slot IN ('live', 'shadow')),
  version integer NOT NULL,
  position text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, slot)
);`;

const createTable = (table: string) => `
CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, doc jsonb NOT NULL);
CREATE INDEX IF NOT EXISTS ${table}_doc ON ${table} USING gin (doc jsonb_path_ops);`;

/** Moves a checkpoint by compare-and-set, so two runners never both apply one batch. */
export const advanceCheckpoint = async (
  tx: Sql,
  name: string,
  slot: 'live' | 'shadow',
  from: Position,
  to: Position,
): Promise<void> => {
  const moved = await tx.query(
    `UPDATE projection_checkpoints SET position = $4, updated_at = now()
     WHERE name = $1 AND slot = $2 AND position = $3 RETURNING 1`,
    [name, slot, from, to],
  );
  if (moved.length === 0) throw new CheckpointMovedError(`Checkpoint of '${name}' (${slot}) is no longer ${from}`);
};

export const readCheckpoint = async (db: Sql, name: string, slot: 'live' | 'shadow'): Promise<Position> => {
  const [row] = await db.query<{ position: Position }>(
    'SELECT position FROM projection_checkpoints WHERE name = $1 AND slot = $2',
    [name, slot],
  );
  return row?.position ?? START;
};

/** Applies a batch to a document table: loads every touched document once, writes each once. */
const applyToTable = async <Doc>(
  tx: Sql,
  table: string,
  projection: DocumentProjection<Doc>,
  events: readonly StoredEvent[],
): Promise<void> => {
  const handled = new Set<string>(projection.eventTypes);
  const relevant = events.filter((e) => handled.has(e.type));
  const ids = [...new Set(relevant.map((e) => projection.documentId(e)).filter((id) => id !== null))];
  if (ids.length === 0) return;
  const rows = await tx.query<{ id: string; doc: Doc }>(`SELECT id, doc FROM ${table} WHERE id = ANY($1::text[])`, [
    ids,
  ]);
  const docs = new Map<string, Doc | null>(rows.map((r) => [r.id, r.doc]));
  for (const event of relevant) {
    const id = projection.documentId(event);
    if (id !== null) docs.set(id, projection.evolve(docs.get(id) ?? null, event));
  }
  const upserts = [...docs].filter(([, doc]) => doc !== null).map(([id, doc]) => ({ id, doc }));
  const deletes = [...docs].filter(([, doc]) => doc === null).map(([id]) => id);
  if (upserts.length > 0) {
    await tx.query(
      `INSERT INTO ${table} (id, doc) SELECT x.id, x.doc FROM jsonb_to_recordset($1::jsonb) AS x(id text, doc jsonb)
       ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
      [JSON.stringify(upserts)],
    );
  }
  if (deletes.length > 0) await tx.query(`DELETE FROM ${table} WHERE id = ANY($1::text[])`, [deletes]);
};

/** Runs a document projection on Postgres: batch and checkpoint commit in one transaction. */
export const postgresDocumentProjection = async <Doc>(
  db: Database,
  projection: DocumentProjection<Doc>,
): Promise<RunnableProjection> => {
  const { name, version } = projection;
  const live = tableOf(name);
  const shadow = `${live}${SHADOW}`;
  await db.exec(CHECKPOINTS_SCHEMA + createTable(live));
  await db.query(
    `INSERT INTO projection_checkpoints (name, slot, version, position) VALUES ($1, 'live', $2, $3)
     ON CONFLICT DO NOTHING`,
    [name, version, START],
  );

  const sink = (table: string, slot: 'live' | 'shadow'): ProjectionSink => ({
    checkpoint: () => readCheckpoint(db, name, slot),
    apply: (events, from, to) =>
      db.transaction(async (tx) => {
        await advanceCheckpoint(tx, name, slot, from, to);
        await applyToTable(tx, table, projection, events);
      }),
  });

  return {
    name,
    version,
    eventTypes: projection.eventTypes,
    live: sink(live, 'live'),
    liveVersion: async () => {
      const [row] = await db.query<{ version: number }>(
        `SELECT version FROM projection_checkpoints WHERE name = $1 AND slot = 'live'`,
        [name],
      );
      return row?.version ?? null;
    },
    openShadow: async (): Promise<ShadowSink> => {
      await db.transaction(async (tx) => {
        await tx.query(`DROP TABLE IF EXISTS ${shadow}`);
        await tx.query(`CREATE TABLE ${shadow} (id text PRIMARY KEY, doc jsonb NOT NULL)`);
        await tx.query(
          `INSERT INTO projection_checkpoints (name, slot, version, position) VALUES ($1, 'shadow', $2, $3)
           ON CONFLICT (name, slot) DO UPDATE SET version = excluded.version, position = excluded.position`,
          [name, version, START],
        );
      });
      return {
        ...sink(shadow, 'shadow'),
        promote: () =>
          db.transaction(async (tx) => {
            await tx.query(`DROP TABLE ${live}`);
            await tx.query(`ALTER TABLE ${shadow} RENAME TO ${live}`);
            await tx.query(`CREATE INDEX IF NOT EXISTS ${live}_doc ON ${live} USING gin (doc jsonb_path_ops)`);
            await tx.query(
              `UPDATE projection_checkpoints AS l SET version = s.version, position = s.position, updated_at = now()
               FROM projection_checkpoints AS s
               WHERE l.name = $1 AND l.slot = 'live' AND s.name = $1 AND s.slot = 'shadow'`,
              [name],
            );
            await tx.query(`DELETE FROM projection_checkpoints WHERE name = $1 AND slot = 'shadow'`, [name]);
          }),
        discard: async () => {
          await db.exec(`DROP TABLE IF EXISTS ${shadow}`);
          await db.query(`DELETE FROM projection_checkpoints WHERE name = $1 AND slot = 'shadow'`, [name]);
        },
      };
    },
  };
};

/** Query face over document read models. */
export const postgresReadModels = (db: Sql): ReadModels => ({
  async get<Doc>(collection: string, id: string) {
    const [row] = await db.query<{ doc: Doc }>(`SELECT doc FROM ${tableOf(collection)} WHERE id = $1`, [id]);
    return row?.doc ?? null;
  },
  async find<Doc>(collection: string, query: FindQuery = {}) {
    const table = tableOf(collection);
    const filter = query.where && Object.keys(query.where).length > 0 ? JSON.stringify(query.where) : null;
    const where = 'WHERE ($1::jsonb IS NULL OR doc @> $1::jsonb)';
    const order = (query.orderBy ?? []).map((o) => `doc->'${checked(FIELD, o.field)}' ${o.direction === 'desc' ? 'DESC' : 'ASC'}`);
    const rows = await db.query<{ doc: Doc }>(
      `SELECT doc FROM ${table} ${where} ORDER BY ${[...order, 'id'].join(', ')} LIMIT $2 OFFSET $3`,
      [filter, query.limit ?? null, query.offset ?? 0],
    );
    const [count] = await db.query<{ total: string }>(`SELECT count(*)::text AS total FROM ${table} ${where}`, [filter]);
    return { items: rows.map((r) => r.doc), total: Number(count?.total ?? 0) };
  },
});

import {
  DomainEventSchema,
  parseStoredEvent,
  type DomainEvent,
  type StoredEvent,
} from '../../src/domain/events.js';
import type { EventMetadata } from '../../src/domain/metadata.js';
import { position } from '../../src/domain/position.js';
import { isArrayParam, type ArrayParam } from '../postgres/arrayParam.js';
import type { Database } from '../postgres/database.js';
import type { PreparedParam } from '../postgres/preparedQuery.js';

/** One event row, as the columns below list it. */
type EventTuple = [
  globalPosition: string,
  transactionId: string,
  streamId: string,
  revision: string,
  type: string,
  schemaVersion: number,
  data: unknown,
  metadata: EventMetadata,
  /** Epoch milliseconds, or an ISO 8601 timestamp. */
  recordedAt: number | string,
];

const COLUMNS = [
  'global_position::text',
  'transaction_id::text',
  'stream_id',
  'stream_revision::text',
  'event_type',
  'schema_version',
  'data',
  'metadata',
];
/** In JSON a timestamp is already ISO 8601; as a row field, epoch milliseconds parse fastest. */
const RECORDED_AT_JSON = 'recorded_at';
const RECORDED_AT_ROW = '(extract(epoch FROM recorded_at) * 1000)::float8';

const LATEST_VERSION = new Map<string, number>(
  DomainEventSchema.options.map((option) => [option.shape.type.value, option.shape.schemaVersion.value]),
);

/**
 * Appends validate every event, so one stored at the current schema version is valid as it is;
 * older versions go through the upcasters (and validation) of the catalog.
 */
const domainEvent = (type: string, schemaVersion: number, data: unknown): DomainEvent =>
  LATEST_VERSION.get(type) === schemaVersion
    ? ({ type, schemaVersion, data } as DomainEvent)
    : parseStoredEvent(type, schemaVersion, data);

/** Postgres writes UTC timestamps in JSON as `2026-01-02T03:04:05.678912+00:00`. */
const UTC_TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00:00$/;

/** ISO 8601 with milliseconds, as `Date#toISOString` writes it; UTC text is cut to shape without parsing. */
const isoTimestamp = (recordedAt: number | string): string => {
  const utc = typeof recordedAt === 'string' ? UTC_TIMESTAMP.exec(recordedAt) : null;
  if (!utc) return new Date(recordedAt).toISOString();
  return `${utc[1]}.${(utc[2] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
};

/** Built as one flat literal: spreading the domain event into it costs several times more per event. */
const toStored = ([
  gpos,
  tx,
  streamId,
  revision,
  type,
  schemaVersion,
  data,
  metadata,
  recordedAt,
]: EventTuple): StoredEvent => {
  const event = domainEvent(type, schemaVersion, data);
  return {
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: event.data,
    streamId,
    revision: BigInt(revision),
    position: position(tx, gpos),
    metadata,
    recordedAt: isoTimestamp(recordedAt),
  } as StoredEvent;
};

/** What the event store's statements take as parameters. */
export type StatementParam = string | number | bigint | null | ArrayParam;

/** A parameter as an embedded statement takes it: numbers as text. */
export const embeddedParam = (param: StatementParam): PreparedParam =>
  typeof param === 'number' || typeof param === 'bigint' ? String(param) : param;

/** A parameter as `pg` takes it, which writes arrays as literals itself. */
export const serverParam = (param: StatementParam): unknown => (isArrayParam(param) ? param.values : param);

export interface EventQuery {
  /** SQL conditions on ledger_events, joined with AND. */
  where: readonly string[];
  orderBy: string;
  /** Placeholder (or literal) for the row limit; NULL means none. */
  limit: string;
  params: readonly StatementParam[];
}

/**
 * Reads events the fastest way for each engine. PGlite pays dearly per field it returns, so there
 * the rows come back as one JSON document, from a statement prepared once; a server returns plain
 * rows.
 */
export const eventReader = (db: Database) => {
  const inner = (q: EventQuery) =>
    `FROM ledger_events WHERE ${q.where.join(' AND ')} ORDER BY ${q.orderBy} LIMIT ${q.limit}`;

  const textRows = db.textRows?.bind(db);
  if (textRows) {
    return async (q: EventQuery): Promise<StoredEvent[]> => {
      const [[events] = []] = await textRows(
        `SELECT coalesce(json_agg(json_build_array(${[...COLUMNS, RECORDED_AT_JSON].join(', ')}) ORDER BY ${q.orderBy}), '[]')::text
         FROM (SELECT * ${inner(q)}) ledger_events`,
        q.params.map(embeddedParam),
      );
      return (JSON.parse(events ?? '[]') as EventTuple[]).map(toStored);
    };
  }

  const aliased = [...COLUMNS, RECORDED_AT_ROW].map((column, i) => `${column} AS c${i}`).join(', ');
  return async (q: EventQuery): Promise<StoredEvent[]> => {
    const rows = await db.query<Record<string, unknown>>(
      `SELECT ${aliased} ${inner(q)}`,
      q.params.map(serverParam),
    );
    return rows.map((r) => toStored([r.c0, r.c1, r.c2, r.c3, r.c4, r.c5, r.c6, r.c7, r.c8] as EventTuple));
  };
};

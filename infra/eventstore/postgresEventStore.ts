import { ConcurrencyError } from '../../src/errors.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { START, position, positionParts, type Position } from '../../src/domain/position.js';
import {
  MAX_APPEND_BYTES,
  type AllFilter,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
  type Subscription,
} from '../../src/ports/eventStore.js';
import type { Database } from '../postgres/database.js';
import { arrayParam, type ArrayParam } from '../postgres/arrayParam.js';
import { embeddedParam, eventReader, serverParam, type StatementParam } from './postgresEventRows.js';
import { groupCommit } from './groupCommit.js';
import { prepareAppend, type PreparedAppend, type PreparedEvent } from './preparedAppend.js';
import { EVENT_STORE_SCHEMA } from './postgresSchema.js';

/** Only transactions that began before every one still running are certain to be complete. */
const VISIBLE = `transaction_id < pg_snapshot_xmin(pg_current_snapshot())`;

const POLL_INTERVAL_MS = 1_000;
const CHANNEL = 'ledger_events';
/** Appends that finish within this window share one NOTIFY. */
const NOTIFY_COALESCE_MS = 5;
/** A failing handler is retried with doubling delays up to this. */
const MAX_RETRY_DELAY_MS = 5_000;
const DEFAULT_BATCH = 500;

/** One row per append: its last revision and position, or (position NULL) the stream's actual revision. */
type AppendRow = [append: string, revision: string, transactionId: string | null, globalPosition: string | null];

const expectedText = (expected: ExpectedRevision): string =>
  typeof expected === 'bigint' ? expected.toString() : expected;

const ANSWER = 'SELECT append::text, revision::text, transaction_id, global_position::text';
/** Both take their events last, as columns: types, schema versions, data, metadata, projects. */
const SINGLE_APPEND = `${ANSWER} FROM ledger_append($1, $2, $3, $4::uuid,
  $5::text[], $6::integer[], $7::json[], $8::json[], $9::text[])`;
const BATCH_APPEND = `${ANSWER} FROM ledger_append_batch($1::text[], $2::text[], $3::text[], $4::uuid[], $5::integer[],
  $6::integer[], $7::text[], $8::integer[], $9::json[], $10::json[], $11::text[])`;

const eventColumns = (events: readonly PreparedEvent[]): ArrayParam[] => [
  arrayParam('text', events.map((e) => e.type)),
  arrayParam('int4', events.map((e) => e.schemaVersion)),
  arrayParam('json', events.map((e) => e.data)),
  arrayParam('json', events.map((e) => e.metadata)),
  arrayParam('text', events.map((e) => e.project)),
];

/**
 * The statement that writes appends, in one transaction: one append alone, the common case, or a
 * batch. Exported so that tests can run it inside a transaction they hold open.
 */
export const appendStatement = (
  appends: readonly PreparedAppend[],
): { text: string; params: StatementParam[] } => {
  if (appends.length === 1) {
    const [{ streamId, expected, category, firstEventId, events }] = appends as [PreparedAppend];
    return {
      text: SINGLE_APPEND,
      params: [streamId, expectedText(expected), category, firstEventId, ...eventColumns(events)],
    };
  }
  return {
    text: BATCH_APPEND,
    params: [
      arrayParam('text', appends.map((a) => a.streamId)),
      arrayParam('text', appends.map((a) => expectedText(a.expected))),
      arrayParam('text', appends.map((a) => a.category)),
      arrayParam('uuid', appends.map((a) => a.firstEventId)),
      arrayParam('int4', appends.map((a) => a.events.length)),
      // Each event's append, by its place in the batch, from 1.
      arrayParam('int4', appends.flatMap((a, k) => a.events.map(() => k + 1))),
      ...eventColumns(appends.flatMap((a) => a.events)),
    ],
  };
};

/**
 * A retried append (the same events) whose original was written conflicts on its revision or fails
 * on the unique first event id: then the original's last event answers.
 */
const RETRIED_APPEND = `SELECT last.stream_revision::text AS revision, last.transaction_id::text,
    last.global_position::text
  FROM ledger_events first JOIN ledger_events last
    ON last.stream_id = first.stream_id AND last.stream_revision = first.stream_revision + $3 - 1
  WHERE first.first_event_id = $2 AND first.stream_id = $1`;
const DUPLICATE_KEY = '23505';
/** Streams whose revision an embedded store remembers; the least recently appended are forgotten. */
const KNOWN_STREAMS = 10_000;
/** Append statements in flight at once on a server; appends made meanwhile wait and go together. */
const SERVER_APPENDS_IN_FLIGHT = 2;

export interface PostgresEventStoreOptions {
  /** How often a subscription looks for new events when no notification wakes it. */
  pollIntervalMs?: number;
  /**
   * On a server, append statements in flight at once (default 2). Appends made while they run wait,
   * and go together in the next statement. Embedded, statements run one at a time anyway.
   */
  appendsInFlight?: number;
}

export const createPostgresEventStore = async (
  db: Database,
  options: PostgresEventStoreOptions = {},
): Promise<EventStore> => {
  await db.exec(EVENT_STORE_SCHEMA);
  const readEvents = eventReader(db);
  // Only this process opens an embedded database (its data directory is locked), so every append
  // passes here and the revisions remembered are exact.
  const known = db.engine === 'pglite' ? new Map<string, bigint>() : null;
  const remember = (streamId: string, revision: bigint) => {
    if (!known) return;
    // A retried append answers with its original's (older) revision: keep the latest.
    const latest = known.get(streamId);
    known.delete(streamId);
    known.set(streamId, latest !== undefined && latest > revision ? latest : revision);
    if (known.size > KNOWN_STREAMS) known.delete(known.keys().next().value!);
  };
  const pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;

  const wakers = new Set<() => void>();
  const wakeAll = () => wakers.forEach((wake) => wake());
  const unlisten = await db.listen(CHANNEL, wakeAll);

  // Subscribers in this process are woken at once; those of other processes sharing a server by one
  // NOTIFY per burst of appends. PGlite has no other processes.
  let pendingNotify: NodeJS.Timeout | undefined;
  const notify = async () => {
    pendingNotify = undefined;
    await db.query(`SELECT pg_notify('${CHANNEL}', '')`).catch(() => undefined);
  };
  const announceAppend = () => {
    wakeAll();
    if (db.engine === 'postgres' && !pendingNotify) {
      pendingNotify = setTimeout(() => void notify(), NOTIFY_COALESCE_MS);
    }
  };

  /** Runs the append statement; embedded, prepared once and with its answer read as text. */
  const runAppends = async (appends: readonly PreparedAppend[]): Promise<AppendRow[]> => {
    const { text, params } = appendStatement(appends);
    if (db.textRows) return (await db.textRows(text, params.map(embeddedParam))) as AppendRow[];
    const rows = await db.query<Record<string, string | null>>(text, params.map(serverParam));
    return rows.map((r) => [r.append, r.revision, r.transaction_id, r.global_position] as AppendRow);
  };

  /** What the original of a retried append wrote, if it was written. */
  const original = async (append: PreparedAppend): Promise<AppendResult | undefined> => {
    const [row] = await db.query<{ revision: string; transaction_id: string; global_position: string }>(
      RETRIED_APPEND,
      [append.streamId, append.firstEventId, append.events.length],
    );
    return row && { nextExpectedRevision: BigInt(row.revision), position: position(row.transaction_id, row.global_position) };
  };

  const answer = async (append: PreparedAppend, row: AppendRow | undefined): Promise<AppendResult> => {
    if (!row) throw new Error(`No answer for the append to '${append.streamId}'`);
    const [, revision, transactionId, globalPosition] = row;
    if (transactionId !== null && globalPosition !== null) {
      return { nextExpectedRevision: BigInt(revision), position: position(transactionId, globalPosition) };
    }
    const retried = await original(append);
    if (retried) return retried;
    const actual = BigInt(revision);
    throw new ConcurrencyError(append.streamId, String(append.expected), actual < 0n ? 'no_stream' : actual.toString());
  };

  const writeBatch = async (appends: PreparedAppend[]): Promise<PromiseSettledResult<AppendResult>[]> => {
    let rows: AppendRow[];
    try {
      rows = await runAppends(appends);
    } catch (error) {
      // The batch wrote nothing. Alone, each append gets an answer of its own, in order.
      if (appends.length > 1) {
        const settled: PromiseSettledResult<AppendResult>[] = [];
        for (const append of appends) settled.push(...(await writeBatch([append])));
        return settled;
      }
      const retried = (error as { code?: string }).code === DUPLICATE_KEY ? await original(appends[0]!) : undefined;
      return [retried ? { status: 'fulfilled', value: retried } : { status: 'rejected', reason: error }];
    }
    announceAppend();
    const byAppend = new Map(rows.map((row) => [Number(row[0]), row]));
    return Promise.allSettled(
      appends.map(async (append, k) => {
        const result = await answer(append, byAppend.get(k + 1));
        remember(append.streamId, result.nextExpectedRevision);
        return result;
      }),
    );
  };

  const submit = groupCommit(writeBatch, {
    concurrency: db.engine === 'pglite' ? 1 : (options.appendsInFlight ?? SERVER_APPENDS_IN_FLIGHT),
    maxBytes: MAX_APPEND_BYTES,
    sizeOf: (append) => append.bytes,
  });

  const readStream = async (streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> => {
    const backwards = options.direction === 'backwards';
    const params: StatementParam[] = [streamId];
    const where = ['stream_id = $1'];
    const bound = (op: string, value: bigint) => {
      params.push(value);
      where.push(`stream_revision ${op} $${params.length}`);
    };
    if (options.fromRevision !== undefined) bound(backwards ? '<=' : '>=', options.fromRevision);
    if (options.toRevision !== undefined) bound(backwards ? '>=' : '<=', options.toRevision);
    params.push(options.maxCount ?? null);
    return readEvents({
      where,
      orderBy: `ledger_events.stream_revision ${backwards ? 'DESC' : 'ASC'}`,
      limit: `$${params.length}`,
      params,
    });
  };

  const readStreams = async (streamIds: readonly string[]): Promise<Map<string, StoredEvent[]>> => {
    const streams = new Map<string, StoredEvent[]>();
    if (streamIds.length === 0) return streams;
    const events = await readEvents({
      where: ['stream_id = ANY($1::text[])'],
      orderBy: 'ledger_events.stream_id, ledger_events.stream_revision',
      limit: '$2',
      params: [arrayParam('text', streamIds), null],
    });
    for (const event of events) {
      const stream = streams.get(event.streamId);
      if (stream) stream.push(event);
      else streams.set(event.streamId, [event]);
    }
    return streams;
  };

  const filterSql = (filter: AllFilter | undefined, params: StatementParam[]): string[] => {
    const where: string[] = [];
    const add = (sql: (placeholder: string) => string, value: StatementParam) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter?.eventTypes?.length) add((p) => `event_type = ANY(${p}::text[])`, arrayParam('text', filter.eventTypes));
    if (filter?.categories?.length) add((p) => `category = ANY(${p}::text[])`, arrayParam('text', filter.categories));
    if (filter?.project) add((p) => `project = ${p}`, filter.project);
    if (filter?.actor !== undefined) add((p) => `metadata->'actor'->>'subject' = ${p}`, filter.actor);
    if (filter?.commandId !== undefined) add((p) => `metadata->>'commandId' = ${p}`, filter.commandId);
    if (filter?.correlationId !== undefined)
      add((p) => `metadata->>'correlationId' = ${p}`, filter.correlationId);
    // Events report their time to the millisecond; a bound compares with that, not the stored microseconds.
    if (filter?.since !== undefined)
      add((p) => `date_trunc('milliseconds', recorded_at) >= ${p}::timestamptz`, filter.since);
    if (filter?.until !== undefined)
      add((p) => `date_trunc('milliseconds', recorded_at) <= ${p}::timestamptz`, filter.until);
    return where;
  };

  /** Events after (`>`) or before (`<`) the position `at` in commit order; its parts go to `params`. */
  const beyond = (at: Position, op: '<' | '>', params: StatementParam[]): string => {
    const [tx, gpos] = positionParts(at);
    params.push(tx.toString(), gpos.toString());
    return `(transaction_id, global_position) ${op} ($${params.length - 1}::xid8, $${params.length}::bigint)`;
  };

  const readAll = async (options: ReadAllOptions = {}): Promise<StoredEvent[]> => {
    const backwards = options.direction === 'backwards';
    const params: StatementParam[] = [];
    const where = [VISIBLE, ...filterSql(options.filter, params)];
    if (options.from !== undefined && !(backwards && options.from === START)) {
      where.push(beyond(options.from, backwards ? '<' : '>', params));
    }
    params.push(options.maxCount ?? null);
    const order = backwards ? 'DESC' : 'ASC';
    return readEvents({
      where,
      // Qualified: the selected text columns share these names, and would sort as text.
      orderBy: `ledger_events.transaction_id ${order}, ledger_events.global_position ${order}`,
      limit: `$${params.length}`,
      params,
    });
  };

  const countAll = async ({ from, limit }: { from?: Position; limit?: number } = {}): Promise<number> => {
    const params: StatementParam[] = [];
    const where = [VISIBLE];
    if (from !== undefined && from !== START) where.push(beyond(from, '>', params));
    params.push(limit === undefined || !Number.isFinite(limit) ? null : limit);
    const [row] = await db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM (SELECT 1 FROM ledger_events WHERE ${where.join(' AND ')} LIMIT $${params.length}) counted`,
      params,
    );
    return row?.count ?? 0;
  };

  const headPosition = async (): Promise<Position> => {
    const [row] = await db.query<{ transaction_id: string; global_position: string }>(
      `SELECT transaction_id::text, global_position::text FROM ledger_events WHERE ${VISIBLE}
       ORDER BY ledger_events.transaction_id DESC, ledger_events.global_position DESC LIMIT 1`,
    );
    return row ? position(row.transaction_id, row.global_position) : START;
  };

  const subscribe = (
    handler: (events: StoredEvent[]) => Promise<void>,
    { from, filter, batchSize = DEFAULT_BATCH, onError }: SubscribeOptions,
  ): Subscription => {
    let stopped = false;
    let endSleep: () => void = () => undefined;
    let wakeable = false;
    // An append announced while a batch is being handled must not wait for the next poll.
    let appended = false;
    const onAppend = () => {
      appended = true;
      if (wakeable) endSleep();
    };
    const sleep = (ms: number, byAppends: boolean) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          endSleep = () => undefined;
          wakeable = false;
          resolve();
        }
        endSleep = done;
        // After a failure, new appends must not hurry the retry: only time (or stop) ends the wait.
        wakeable = byAppends;
      });
    wakers.add(onAppend);
    const loop = async () => {
      let checkpoint = from;
      let failures = 0;
      while (!stopped) {
        appended = false;
        try {
          const events = await readAll({ from: checkpoint, maxCount: batchSize, filter });
          if (events.length > 0) {
            await handler(events);
            checkpoint = events[events.length - 1]!.position;
          }
          failures = 0;
          if (events.length === batchSize || appended) continue;
        } catch (error) {
          failures++;
          onError?.(error);
        }
        if (stopped) break;
        await (failures === 0
          ? sleep(pollIntervalMs, true)
          : sleep(Math.min(MAX_RETRY_DELAY_MS, pollIntervalMs * 2 ** (failures - 1)), false));
      }
      wakers.delete(onAppend);
    };
    const running = loop();
    return {
      stop: async () => {
        stopped = true;
        endSleep();
        await running;
      },
    };
  };

  return {
    name: `postgres (${db.engine})`,
    append: async (streamId, events, expected) => submit(prepareAppend(streamId, events, expected)),
    readStream,
    readStreams,
    readAll,
    countAll,
    headPosition,
    subscribe,
    ...(known ? { knownRevision: (streamId: string) => known.get(streamId) } : {}),
    close: async () => {
      wakeAll();
      if (pendingNotify) {
        clearTimeout(pendingNotify);
        await notify();
      }
      await unlisten();
    },
  };
};

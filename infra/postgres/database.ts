import { PGlite, messages } from '@electric-sql/pglite';
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { CredentialsRefusedError, DatabaseUnavailableError, InsufficientStorageError } from '../../src/errors.js';
import { growMemoryFilesByDoubling } from './memoryFiles.js';
import { preparedQueryMessage, type PreparedParam } from './preparedQuery.js';
import { retireWal, rewriteTables } from './purge.js';
import type { Database as DatabasePort } from '../../src/ports/database.js';

/** The database port, with the embedded engine's fast path for the event store. */
export interface Database extends DatabasePort {
  /**
   * Embedded only: runs one statement, prepared on its first call, with text and array parameters,
   * and answers its rows' values as text; for the event store's statements, which run all the time.
   * Each distinct text stays prepared for the session, so values go in `params`, never in `sql`.
   */
  textRows?(sql: string, params: readonly PreparedParam[]): Promise<(string | null)[][]>;
}

const asParams = (params?: readonly unknown[]): unknown[] | undefined =>
  params?.map((p) => (typeof p === 'bigint' ? p.toString() : p));

/**
 * Whether a copy of a table that a rebuild (or a time-travel snapshot) fills gets its indexes when
 * it is made, empty, rather than in bulk after its load. A bulk build takes a fraction of the time
 * of row-by-row inserts; but the embedded database has one connection, and every search waits
 * behind that one statement for as long as it runs, tens of seconds at a million rows. There the
 * indexes are made first and filled as the rows come: the copy takes longer, and a search waits for
 * one batch at most. On a server, other connections keep serving while a bulk build runs.
 */
export const indexesCopiesFirst = (db: Pick<Database, 'engine'>): boolean => searchesWaitForWrites(db);

/** Whether a search waits for a write in progress: the embedded database has one connection. */
export const searchesWaitForWrites = (db: Pick<Database, 'engine'>): boolean => db.engine === 'pglite';

/** The extensions every embedded database is opened with: its settings name them from the first start. */
export const PGLITE_EXTENSIONS = { vector, pg_textsearch };

/** SQLSTATE disk_full, and the errno codes of a full disk, a quota reached or a file grown past its limit. */
const STORAGE_FULL_CODES = new Set(['53100', 'ENOSPC', 'EDQUOT', 'EFBIG']);
const STORAGE_FULL_MESSAGES = /No space left on device|Disk quota exceeded|File too large/i;

/** True for errors that say the disk under the database is full: PGlite and a server raise 53100. */
export const isStorageFullError = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  if (error instanceof AggregateError) return error.errors.some(isStorageFullError);
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && STORAGE_FULL_CODES.has(code)) || STORAGE_FULL_MESSAGES.test(error.message);
};

/** The one place a full disk becomes InsufficientStorageError, for both engines; other errors pass unchanged. */
const storageFull = (error: unknown): unknown =>
  isStorageFullError(error)
    ? new InsufficientStorageError(`Insufficient storage: ${(error as Error).message}`, {
        cause: error,
        details: { suggestion: 'Free space on the disk that holds the database; writes resume by themselves' },
      })
    : error;

const mappingStorageErrors = async <T>(work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (error) {
    throw storageFull(error);
  }
};

/**
 * The embedded database runs alone, without the background workers a server runs, so it does by
 * itself what they would do:
 * - Checkpoints: it never checkpoints on its own, and would keep every byte of write-ahead log
 *   written since it opened, about 20 KB per ingested document. It checkpoints once this much has
 *   been written since the last checkpoint; the limits below make it keep only a few segments then.
 * - Statistics: autovacuum's ANALYZE never runs, so the planner knows nothing of how a table's
 *   values are spread, and takes `column = ANY(500 values)` for the whole table: a sequential scan
 *   per batch, slower as the store grows. A table whose size has grown by half since its last
 *   ANALYZE (or that was never analyzed) is analyzed again: a few times over its life. On a table
 *   with a BM25 index, ANALYZE also has the index write out its memtable (merging segments if that
 *   fills a level) and return its dead memtable pages for reuse: up to seconds, every search
 *   waiting, but analyzed once only, the keyword table grew by a fifth to a third (100,000
 *   documents: 491 MiB, against 366 and 410 in two runs analyzed as they grew).
 */
const CHECKPOINT_WAL_BYTES = 64 * 1024 * 1024;
/**
 * Without full-page images, which repair a page torn by a power loss: PGlite runs with fsync off
 * (`-F`), so what a power loss catches unwritten is lost with them or without; and a process that
 * dies cannot tear a page the operating system already holds. After each checkpoint the first
 * change to every page would copy it whole into the log: at 100,000 documents, 43% of the log
 * written (27.2 → 15.6 KB per document), a share that grows with the store.
 */
const WAL_LIMITS = ['-c', 'max_wal_size=64MB', '-c', 'min_wal_size=32MB', '-c', 'full_page_writes=off'];
/**
 * The BM25 index keeps new rows in a memtable, written out as a segment once it holds this many
 * 8 KB pages (pg_textsearch's default is 64): fewer, larger spills and merges. Measured on 20,000
 * documents of 1 KB: 15 to 22% less CPU per document ingested and 40% less write-ahead log, for
 * keyword searches some 0.6 ms slower (p50 4 ms), which read the larger memtable.
 *
 * A level of segments is merged into one once it holds 16 (the default is 8): each row is
 * rewritten by fewer merges as the index grows. On 300,000 documents of 1 KB, two runs of each:
 * 5 to 6% less CPU per document, the slowest tenth of the load 30% faster, a keyword index 5 to
 * 14% smaller, and keyword searches no slower (docs/deployment.md, "Fewer merges").
 */
const TEXT_INDEX_SETTINGS = [
  ...['-c', 'pg_textsearch.memtable_pages_threshold=1024'],
  ...['-c', 'pg_textsearch.segments_per_level=16'],
];
/** How often the embedded database looks at its log and its tables. */
const MAINTENANCE_MS = 5_000;

const GROWN_TABLES = `SELECT c.oid::regclass::text AS name FROM pg_class c
  WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
    AND pg_relation_size(c.oid) / 8192 > 1.5 * greatest(c.relpages, 0) + 16`;

/** Checkpoints and analyzes as described above, every `MAINTENANCE_MS`; returns the stop. */
const maintaining = (db: PGlite): (() => void) => {
  const timer = setInterval(() => {
    void (async () => {
      for (const { name } of (await db.query<{ name: string }>(GROWN_TABLES)).rows) await db.exec(`ANALYZE ${name}`);
      const [row] = (
        await db.query<{ bytes: string }>(
          'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::text AS bytes FROM pg_control_checkpoint()',
        )
      ).rows;
      if (Number(row?.bytes ?? 0) > CHECKPOINT_WAL_BYTES) await db.exec('CHECKPOINT');
    })().catch(() => undefined);
  }, MAINTENANCE_MS);
  timer.unref();
  return () => clearInterval(timer);
};

/** Opens PGlite, in memory when `dataDir` is undefined, with pgvector and pg_textsearch loaded. */
export const openPglite = async (dataDir?: string): Promise<Database> => {
  const db = await PGlite.create(dataDir, {
    extensions: PGLITE_EXTENSIONS,
    startParams: [...PGlite.defaultStartParams, ...WAL_LIMITS, ...TEXT_INDEX_SETTINGS],
  });
  if (dataDir === undefined) growMemoryFilesByDoubling(db);
  const stopMaintenance = dataDir === undefined ? () => undefined : maintaining(db);
  /** Names of the statements `textRows` has prepared, by their SQL. */
  const prepared = new Map<string, string>();
  // Without parameters, the simple protocol does in one exchange what the extended one does in five.
  const run = (runner: Pick<PGlite, 'query' | 'exec'>) => ({
    query: <R>(text: string, params?: readonly unknown[]): Promise<R[]> =>
      mappingStorageErrors(async () => {
        if (!params?.length) return ((await runner.exec(text)).at(-1)?.rows ?? []) as R[];
        return (await runner.query<R>(text, asParams(params))).rows;
      }),
  });
  const sql = run(db);
  return {
    engine: 'pglite',
    ...sql,
    transaction: (fn) => mappingStorageErrors(() => db.transaction((tx) => fn(run(tx)))),
    exec: (script) =>
      mappingStorageErrors(async () => {
        await db.exec(script);
      }),
    listen: async (channel, onNotify) => {
      const unlisten = await db.listen(channel, onNotify);
      return unlisten;
    },
    availableExtensions: () => Promise.resolve(new Set(['vector', 'pg_textsearch', 'plpgsql'])),
    purge: async (tables) => {
      await rewriteTables(sql, tables);
      await retireWal(db, dataDir);
    },
    // Holds both of PGlite's locks, as its own queries do, so it never runs inside another's transaction.
    textRows: (sql, params) =>
      mappingStorageErrors(() => db._runExclusiveTransaction(() =>
        db.runExclusive(async () => {
          const known = prepared.get(sql);
          const name = known ?? `ctx_statement_${prepared.size + 1}`;
          const answer = await db.execProtocol(preparedQueryMessage(name, known ? undefined : sql, params), {
            throwOnError: false,
          });
          const rows: (string | null)[][] = [];
          let error: messages.DatabaseError | undefined;
          for (const message of answer.messages) {
            if (message instanceof messages.DataRowMessage) rows.push(message.fields);
            else if (message instanceof messages.DatabaseError) error ??= message;
            // A statement that failed to parse is not prepared, and is parsed again next time.
            else if (message.name === 'parseComplete') prepared.set(sql, name);
          }
          if (error) throw error;
          return rows;
        }),
      )),
    close: () => {
      stopMaintenance();
      return db.close();
    },
  };
};

/**
 * SQLSTATEs of a server that is gone, going away or not taking connections: class 08 (connection
 * exception), admin/crash shutdown, starting up, and too many connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a server that cannot be reached or dropped the connection. */
const UNAVAILABLE_SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);
/** What `pg` says (without a code) when a connection ends under a query or cannot be made in time. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|timeout expired)/;

/** True for errors that say the database cannot be reached now, as opposed to errors in what was asked. */
export const isConnectionError = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  if (error instanceof AggregateError) return error.errors.some(isConnectionError);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) return true;
    if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_ERRORS.has(code)) return true;
  }
  return UNAVAILABLE_MESSAGES.test(error.message);
};

/**
 * A server that refuses the configured role or password (SQLSTATE class 28) or knows no database of
 * the configured name (3D000): no retry mends either until the configuration is mended.
 */
const refusedConnection = (error: unknown): CredentialsRefusedError | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code.startsWith('28') || code === '3D000')) return undefined;
  return new CredentialsRefusedError(
    `The PostgreSQL server refused the connection: ${(error as Error).message} (SQLSTATE ${code}). ` +
      'Set storage.postgres_url to a role, password and database it accepts',
    { cause: error },
  );
};

const MAX_LISTEN_RETRY_MS = 5_000;

/** Connects to a PostgreSQL server; `pool.max` bounds concurrent connections. */
export const connectPostgres = (connectionString: string, options: { max?: number } = {}): Database => {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10 });
  // An idle client that loses its connection must not take the process down; the next query reconnects.
  pool.on('error', () => undefined);
  /**
   * The one place a lost or refused connection becomes DatabaseUnavailableError, and refused
   * credentials CredentialsRefusedError; other errors pass unchanged.
   */
  const unavailable = (error: unknown): unknown => {
    if (isStorageFullError(error)) return storageFull(error);
    const refused = refusedConnection(error);
    if (refused) return refused;
    if (!isConnectionError(error)) return error;
    return new DatabaseUnavailableError(`Database unavailable: ${(error as Error).message || (error as { code?: string }).code}`, {
      cause: error,
      details: {
        suggestion: 'Check that the database server is running and reachable, then retry',
        pool_statistics: {
          total_connections: pool.totalCount,
          idle_connections: pool.idleCount,
          waiting_requests: pool.waitingCount,
        },
      },
    });
  };
  const mapped = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw unavailable(error);
    }
  };
  const run = (runner: Pick<pg.Pool, 'query'>) => ({
    query: <R>(text: string, params?: readonly unknown[]): Promise<R[]> =>
      mapped(async () => (await runner.query(text, asParams(params))).rows as R[]),
  });
  return {
    engine: 'postgres',
    ...run(pool),
    transaction: (fn) =>
      mapped(async () => {
        const client = await pool.connect();
        // A connection lost between two statements is reported by the next one, not as a crash.
        const ignore = () => undefined;
        client.on('error', ignore);
        try {
          await client.query('BEGIN');
          const result = await fn(run(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        } finally {
          client.off('error', ignore);
          client.release();
        }
      }),
    exec: (script) =>
      mapped(async () => {
        await pool.query(script);
      }),
    listen: async (channel, onNotify) => {
      let current: pg.Client | null = null;
      let closed = false;
      let retry: NodeJS.Timeout | undefined;
      let failures = 0;
      const connect = async () => {
        const client = new pg.Client({ connectionString });
        client.on('error', () => undefined);
        client.on('notification', (message) => {
          if (message.channel === channel) onNotify(message.payload ?? '');
        });
        try {
          await client.connect();
          await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        } catch (error) {
          await client.end().catch(() => undefined);
          throw error;
        }
        if (closed) return void (await client.end().catch(() => undefined));
        current = client;
        client.on('end', () => {
          if (!closed && current === client) reconnectLater();
        });
      };
      // A lost connection is made again, with growing pauses; notifications sent meanwhile are lost,
      // so the listener is woken once on reconnecting to look for what it missed.
      const reconnectLater = () => {
        current = null;
        retry = setTimeout(() => {
          connect().then(
            () => {
              failures = 0;
              onNotify('');
            },
            () => reconnectLater(),
          );
        }, Math.min(MAX_LISTEN_RETRY_MS, 100 * 2 ** failures++));
      };
      await mapped(connect);
      return async () => {
        closed = true;
        clearTimeout(retry);
        await current?.end().catch(() => undefined);
      };
    },
    availableExtensions: async () => {
      const rows = await mapped(async () => (await pool.query<{ name: string }>('SELECT name FROM pg_available_extensions')).rows);
      return new Set(rows.map((r) => r.name));
    },
    purge: (tables) => rewriteTables(run(pool), tables),
    close: () => pool.end(),
  };
};

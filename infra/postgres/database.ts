import { PGlite } from '@electric-sql/pglite';
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';

/** Something that runs one SQL statement: the database itself, or an open transaction. */
export interface Sql {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * One face over the two Postgres engines the ledger runs on: PGlite in-process (embedded default)
 * and a PostgreSQL server through `pg`. Adapters in infra/ write their SQL once against this.
 */
export interface Database extends Sql {
  readonly engine: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** Runs a script of several statements, without parameters. */
  exec(script: string): Promise<void>;
  /** Calls `onNotify` for every NOTIFY on `channel`; resolves to an unlisten function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Extensions the engine can create (`vector`, `pg_textsearch`, …). */
  availableExtensions(): Promise<Set<string>>;
  close(): Promise<void>;
}

const asParams = (params?: readonly unknown[]): unknown[] | undefined =>
  params?.map((p) => (typeof p === 'bigint' ? p.toString() : p));

/** Opens PGlite, in memory when `dataDir` is undefined, with pgvector and pg_textsearch loaded. */
export const openPglite = async (dataDir?: string): Promise<Database> => {
  const db = await PGlite.create(dataDir, { extensions: { vector, pg_textsearch } });
  // Without parameters, the simple protocol does in one exchange what the extended one does in five.
  const run = (runner: Pick<PGlite, 'query' | 'exec'>) => ({
    async query<R>(text: string, params?: readonly unknown[]): Promise<R[]> {
      if (!params?.length) return ((await runner.exec(text)).at(-1)?.rows ?? []) as R[];
      return (await runner.query<R>(text, asParams(params))).rows;
    },
  });
  return {
    engine: 'pglite',
    ...run(db),
    transaction: (fn) => db.transaction((tx) => fn(run(tx))),
    exec: async (script) => {
      await db.exec(script);
    },
    listen: async (channel, onNotify) => {
      const unlisten = await db.listen(channel, onNotify);
      return unlisten;
    },
    availableExtensions: () => Promise.resolve(new Set(['vector', 'pg_textsearch', 'plpgsql'])),
    close: () => db.close(),
  };
};

/** Connects to a PostgreSQL server; `pool.max` bounds concurrent connections. */
export const connectPostgres = (connectionString: string, options: { max?: number } = {}): Database => {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10 });
  // An idle client that loses its connection must not take the process down; the next query reconnects.
  pool.on('error', () => undefined);
  const run = (runner: Pick<pg.Pool, 'query'>) => ({
    async query<R>(text: string, params?: readonly unknown[]): Promise<R[]> {
      return (await runner.query(text, asParams(params))).rows as R[];
    },
  });
  return {
    engine: 'postgres',
    ...run(pool),
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(run(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    exec: async (script) => {
      await pool.query(script);
    },
    listen: async (channel, onNotify) => {
      const client = new pg.Client({ connectionString });
      client.on('error', () => undefined);
      await client.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.end().catch(() => undefined);
      };
    },
    availableExtensions: async () => {
      const rows = (await pool.query<{ name: string }>('SELECT name FROM pg_available_extensions')).rows;
      return new Set(rows.map((r) => r.name));
    },
    close: () => pool.end(),
  };
};

import { AsyncLocalStorage } from 'node:async_hooks';

/** Something that runs one SQL statement: the database itself, or an open transaction. */
export interface Sql {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * One face over the two Postgres engines the ledger runs on: PGlite in-process (embedded default)
 * and a PostgreSQL server through `pg`. Adapters write their SQL once against this; modules receive it
 * from the composition root.
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
  /**
   * Takes the bytes of rows deleted from `tables` out of the database's files: rewrites each table
   * that exists, and, embedded, deletes the write-ahead log that recorded them. A server's log,
   * archives and replicas are out of its reach.
   */
  purge(tables: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

const background = new AsyncLocalStorage<true>();

/**
 * Runs `work`, and all it starts, as background work (projections, indexing jobs). An engine with a
 * single connection gives requests' statements their turn first; others ignore the mark.
 */
export const inBackground = <T>(work: () => T): T => background.run(true, work);

/** Whether the caller runs inside `inBackground`. */
export const isBackground = (): boolean => background.getStore() === true;

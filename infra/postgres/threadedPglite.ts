import { DatabaseUnavailableError } from '../../src/errors.js';
import { isBackground, type Sql } from '../../src/ports/database.js';
import { spawn } from '../workers/workerRpc.js';
import type { Database } from './database.js';
import type { DatabaseCall, DatabaseReply, PostedCall } from './pgliteThread.js';
import { receiveError } from './threadErrors.js';

/** The embedded database in its own thread; `terminate` stops the thread at once, as a crash would. */
export interface ThreadedDatabase extends Database {
  terminate(): Promise<void>;
}

/**
 * Opens PGlite (as `openPglite` does, in memory when `dataDir` is undefined) in a worker thread:
 * statements run there, so the calling thread only posts them and awaits their rows. A thread that
 * stops fails every pending and later call with DatabaseUnavailableError.
 */
export const openPgliteThread = async (dataDir?: string): Promise<ThreadedDatabase> => {
  const worker = spawn(new URL('./pgliteThread', import.meta.url), dataDir);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<number, (payload: string) => void>();
  /** Every call and transaction not yet settled, so that closing loses no write in flight. */
  const busy = new Set<Promise<unknown>>();
  let nextId = 0;
  let stopped: Error | undefined;
  let opened!: { resolve: () => void; reject: (e: Error) => void };
  const ready = new Promise<void>((resolve, reject) => (opened = { resolve, reject }));

  const stop = (error: Error) => {
    stopped ??= error;
    opened.reject(stopped);
    for (const { reject } of pending.values()) reject(stopped);
    pending.clear();
  };
  worker.on('message', (reply: DatabaseReply) => {
    if (reply.type === 'ready') return opened.resolve();
    if (reply.type === 'failed') return opened.reject(receiveError(reply.error));
    if (reply.type === 'notify') return listeners.get(reply.listener)?.(reply.payload);
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    // An idle thread does not keep the process alive; one with an answer to give does.
    if (pending.size === 0) worker.unref();
    if (reply.type === 'result') waiting?.resolve(reply.result);
    else waiting?.reject(receiveError(reply.error));
  });
  worker.on('error', (error) =>
    stop(new DatabaseUnavailableError(`The embedded database failed: ${error.message}`, { cause: error })),
  );
  worker.on('exit', () => stop(new DatabaseUnavailableError('The embedded database has stopped')));

  const call = <T>(message: DatabaseCall): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (stopped) return reject(stopped);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.ref();
      worker.postMessage({ id, call: message, background: isBackground() } satisfies PostedCall);
    });
  const tracked = <T>(work: Promise<T>): Promise<T> => {
    busy.add(work);
    const settled = () => busy.delete(work);
    work.then(settled, settled);
    return work;
  };
  const query = <R>(sql: string, params?: readonly unknown[], tx?: number) =>
    tracked(call<R[]>({ op: 'query', sql, params, tx }));

  try {
    await ready;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.unref();
  return {
    engine: 'pglite',
    query: (sql, params) => query(sql, params),
    exec: (script) => tracked(call({ op: 'exec', script })),
    textRows: (sql, params) => tracked(call({ op: 'textRows', sql, params })),
    transaction: (fn) =>
      tracked(
        (async () => {
          const tx = await call<number>({ op: 'begin' });
          const statements: Sql = { query: (sql, params) => query(sql, params, tx) };
          let result;
          try {
            result = await fn(statements);
          } catch (error) {
            await call({ op: 'rollback', tx }).catch(() => undefined);
            throw error;
          }
          await call({ op: 'commit', tx });
          return result;
        })(),
      ),
    listen: async (channel, onNotify) => {
      const listener = await call<number>({ op: 'listen', channel });
      listeners.set(listener, onNotify);
      return async () => {
        listeners.delete(listener);
        await call({ op: 'unlisten', listener });
      };
    },
    availableExtensions: async () => new Set(await call<string[]>({ op: 'availableExtensions' })),
    purge: (tables) => tracked(call({ op: 'purge', tables })),
    close: async () => {
      if (stopped) return;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      await Promise.allSettled(busy);
      await call({ op: 'close' });
      // Answered, the thread is unreferenced: it must hold the process until it has exited.
      worker.ref();
      await exited;
    },
    terminate: async () => {
      await worker.terminate();
    },
  };
};

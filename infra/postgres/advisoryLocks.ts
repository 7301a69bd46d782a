import pg from 'pg';
import type { Logger } from '../../src/ports/logger.js';
import type { ReplicaLocks } from '../../src/ports/replicaLocks.js';

/**
 * Replica locks as PostgreSQL session advisory locks on one connection of their own: the server
 * frees them when that session ends, so a replica killed or cut off lets go of its work by itself.
 * The connection is made again at the next `tryAcquire` after it was lost; what it held is then lost.
 */
export const createAdvisoryLocks = (url: string, logger: Logger): ReplicaLocks => {
  const held = new Set<string>();
  let client: Promise<pg.Client> | null = null;
  let closed = false;

  const lost = (error?: unknown) => {
    if (held.size > 0) logger.warn({ locks: [...held], error: (error as Error | undefined)?.message }, 'replica locks lost with their connection');
    held.clear();
    client = null;
  };

  const connection = (): Promise<pg.Client> => {
    client ??= (async () => {
      const next = new pg.Client({ connectionString: url, application_name: 'context-ledger locks' });
      next.on('error', lost);
      next.on('end', () => lost());
      try {
        await next.connect();
      } catch (error) {
        client = null;
        throw error;
      }
      return next;
    })();
    return client;
  };

  // One query at a time on the connection (a client's own queue of concurrent queries is deprecated
  // in pg), and one 64-bit key per name; the server keeps advisory locks apart per database.
  let previous: Promise<unknown> = Promise.resolve();
  const run = (sql: string, name: string): Promise<boolean> => {
    const result = previous.then(async () => {
      const rows = await (await connection()).query<{ ok: boolean }>(`SELECT ${sql}(hashtextextended($1, 0)) AS ok`, [name]);
      return rows.rows[0]?.ok === true;
    });
    previous = result.catch(() => undefined);
    return result;
  };

  return {
    async tryAcquire(name) {
      if (closed) return false;
      if (held.has(name)) return true;
      if (!(await run('pg_try_advisory_lock', name))) return false;
      held.add(name);
      return true;
    },
    holds: (name) => held.has(name),
    async release(name) {
      if (!held.delete(name)) return;
      await run('pg_advisory_unlock', name).catch((error: unknown) => lost(error));
    },
    async close() {
      closed = true;
      const open = client;
      held.clear();
      client = null;
      await (await open?.catch(() => null))?.end().catch(() => undefined);
    },
  };
};

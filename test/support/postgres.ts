import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connectPostgres, type Database } from '../../infra/postgres/database.js';

/** The PostgreSQL server tests may use, or undefined when none is configured. */
export const testPostgresUrl = (): string | undefined => process.env.CTX_TEST_PG_URL || undefined;

export interface TestDatabase {
  /** Connection string of the fresh database. */
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

const withAdmin = async <T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};

/** Creates an empty database on the server at `serverUrl`, for one test run. */
export const createTestDatabase = async (serverUrl: string, prefix = 'ctx_test'): Promise<TestDatabase> => {
  const name = `${prefix}_${Date.now()}_${randomBytes(4).toString('hex')}`;
  await withAdmin(serverUrl, (client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await withAdmin(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
      );
    },
  };
};

/** A fresh database on the server at `serverUrl`, connected; `close` disconnects and drops it. */
export const connectTestDatabase = async (serverUrl: string, max = 4): Promise<{ db: Database; close: () => Promise<void> }> => {
  const database = await createTestDatabase(serverUrl);
  const db = connectPostgres(database.url, { max });
  return {
    db,
    close: async () => {
      await db.close();
      await database.drop();
    },
  };
};

/**
 * The test server when it can install `extension`, or why its tests are skipped. Debian 12's
 * PostgreSQL 15, which `.ci/run` starts, has neither pgvector nor pg_textsearch (which needs
 * PostgreSQL 17 or 18); a server that has them runs the adapters' contracts against it.
 */
export const serverWith = async (extension: string): Promise<{ url: string } | { skipped: string }> => {
  const url = testPostgresUrl();
  if (!url) return { skipped: 'no PostgreSQL server (set CTX_TEST_PG_URL)' };
  const rows = await withAdmin(url, (client) =>
    client.query('SELECT 1 FROM pg_available_extensions WHERE name = $1', [extension]),
  );
  return rows.rowCount ? { url } : { skipped: `the PostgreSQL server at CTX_TEST_PG_URL has no ${extension}` };
};

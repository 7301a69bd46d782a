import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { Sql } from '../../src/ports/database.js';

/**
 * Rewrites each of `tables` that exists into new files, indexes and TOAST included (VACUUM FULL):
 * Postgres leaves deleted and updated rows in a table's pages (plain VACUUM only marks their space
 * free), and a rewrite is what takes their bytes out of the files. It holds each table exclusively
 * and costs about as much as copying it.
 */
export const rewriteTables = async (sql: Sql, tables: readonly string[]): Promise<void> => {
  const [found] = await sql.query<{ names: string | null }>(
    `SELECT string_agg(to_regclass(t)::text, ', ') AS names FROM unnest($1::text[]) AS t
     WHERE to_regclass(t) IS NOT NULL`,
    [tables],
  );
  if (found?.names) await sql.query(`VACUUM FULL ${found.names}`);
};

const SEGMENT = /^[0-9A-F]{24}$/;

/**
 * Embedded only: deletes the write-ahead log written so far, which holds every row ever inserted.
 * A checkpoint makes the earlier segments unneeded, and with recycling off it deletes them instead
 * of renaming them for reuse. Segments already renamed for reuse (before this ran, or by a startup
 * checkpoint) still hold what they held: they go first, so that the switch starts a new,
 * zero-filled segment. It all runs in one transaction, so no other statement writes meanwhile.
 */
export const retireWal = (db: PGlite, pgdata: string | undefined): Promise<void> =>
  db.transaction(async (tx) => {
    await tx.exec('SET LOCAL wal_recycle = off');
    const [current] = (
      await tx.query<{ name: string }>(
        'SELECT file_name AS name FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())',
      )
    ).rows;
    if (pgdata !== undefined && current) {
      const walDir = path.join(pgdata, 'pg_wal');
      for (const name of readdirSync(walDir)) {
        if (SEGMENT.test(name) && name > current.name) rmSync(path.join(walDir, name));
      }
    }
    await tx.query('SELECT pg_switch_wal()');
    await tx.exec('CHECKPOINT');
  });

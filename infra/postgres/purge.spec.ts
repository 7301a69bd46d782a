import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../test/support/ledger.js';
import { retireWal } from './purge.js';

const MARKER = `walmarker${Date.now()}`;

const segment = async (db: PGlite) =>
  (
    await db.query<{ name: string }>(
      'SELECT file_name AS name FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())',
    )
  ).rows[0]!.name;

/** The write-ahead log files that hold the marker. */
const holding = (pgdata: string) =>
  readdirSync(path.join(pgdata, 'pg_wal')).filter(
    (name) => /^[0-9A-F]{24}$/.test(name) && readFileSync(path.join(pgdata, 'pg_wal', name)).includes(MARKER),
  );

describe('retiring the write-ahead log of an embedded database', () => {
  const pgdata = tempDataDir('ctx-wal-');
  let db: PGlite;

  beforeAll(async () => {
    db = await PGlite.create(pgdata);
    await db.exec(`CREATE TABLE secret (v text); INSERT INTO secret VALUES ('${MARKER}')`);
    await db.exec('CREATE TABLE filler (v text)');
    const first = await segment(db);
    while ((await segment(db)) === first) {
      await db.exec(`INSERT INTO filler SELECT repeat(md5(g::text), 8) FROM generate_series(1, 5000) AS g`);
    }
    // The checkpoint renames the first segment, marker and all, for reuse as a later one.
    await db.exec('CHECKPOINT');
    await db.exec('DELETE FROM secret');
    await db.exec('VACUUM FULL secret');
  });
  afterAll(async () => {
    await db.close();
  });

  it('deletes every segment that holds rows written before, recycled ones included, and loses nothing', async () => {
    const current = await segment(db);
    expect(holding(pgdata).some((name) => name > current)).toBe(true);
    const rows = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM filler')).rows[0]!.n;

    await retireWal(db, pgdata);
    await db.exec(`INSERT INTO filler VALUES ('after')`);
    await db.close();

    expect(holding(pgdata)).toEqual([]);
    db = await PGlite.create(pgdata);
    expect((await db.query('SELECT count(*)::int AS n FROM filler')).rows).toEqual([{ n: rows + 1 }]);
  });
});

import { readdirSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPglite } from './database.js';

const walBytes = (dataDir: string) =>
  readdirSync(join(dataDir, 'pg_wal'), { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(dataDir, 'pg_wal', entry.name)).size, 0);

const MB = 1024 * 1024;

describe('the embedded database’s own maintenance', { timeout: 300_000 }, () => {
  it('gives the BM25 index a memtable of 1,024 pages before it writes a segment', async () => {
    const db = await openPglite();
    try {
      await db.exec(`CREATE EXTENSION IF NOT EXISTS pg_textsearch`);
      const [row] = await db.query<{ pages: string }>(`SELECT current_setting('pg_textsearch.memtable_pages_threshold') AS pages`);
      expect(row!.pages).toBe('1024');
    } finally {
      await db.close();
    }
  });

  it('checkpoints by itself after 64 MB of log, and keeps pg_wal far smaller than what was written', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ctx-wal-'));
    const db = await openPglite(dataDir);
    try {
      await db.exec('CREATE TABLE filler (id serial PRIMARY KEY, value text NOT NULL)');
      const redo = async () =>
        (await db.query<{ lsn: string }>('SELECT redo_lsn::text AS lsn FROM pg_control_checkpoint()'))[0]!.lsn;
      const before = await redo();
      // About 200 MB of log: rows of incompressible text, written and then rewritten.
      let written = 0;
      while (written < 200 * MB) {
        await db.query(
          `INSERT INTO filler (value) SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 32) g, generate_series(1, 200) r GROUP BY r`,
        );
        const [row] = await db.query<{ bytes: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '${before}')::text AS bytes`);
        written = Number(row!.bytes);
      }
      // The check runs every few seconds.
      while ((await redo()) === before) await new Promise((resolve) => setTimeout(resolve, 500));
      expect(walBytes(dataDir)).toBeLessThan(130 * MB);
    } finally {
      await db.close();
    }
  });

  it('analyzes a table that has grown, so that a lookup of many keys at once uses its index', async () => {
    const db = await openPglite(await mkdtemp(join(tmpdir(), 'ctx-analyze-')));
    try {
      await db.exec(`CREATE TABLE items (id text NOT NULL, value text NOT NULL);
        CREATE INDEX items_id ON items (id);
        INSERT INTO items SELECT 'item-' || n, repeat('x', 200) FROM generate_series(1, 50000) n`);
      const analyzed = async () =>
        (await db.query<{ n: number }>(`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'items'`))[0]!.n > 0;
      // The maintenance runs every few seconds.
      while (!(await analyzed())) await new Promise((resolve) => setTimeout(resolve, 500));
      const ids = Array.from({ length: 500 }, (_, i) => `item-${i * 97 + 1}`);
      const plan = await db.query<{ 'QUERY PLAN': string }>('EXPLAIN SELECT * FROM items WHERE id = ANY($1::text[])', [ids]);
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Scan|Bitmap Index Scan/);
    } finally {
      await db.close();
    }
  });

  // Its ANALYZE has the BM25 index write out its memtable and merge segments: seconds, at scale,
  // with every search waiting.
  it('analyzes a table with a BM25 index once, and a lookup of many keys in it grown tenfold still uses its index', async () => {
    const db = await openPglite(await mkdtemp(join(tmpdir(), 'ctx-analyze-bm25-')));
    try {
      await db.exec(`CREATE EXTENSION IF NOT EXISTS pg_textsearch;
        CREATE TABLE plain (id text NOT NULL, value text NOT NULL);
        CREATE TABLE texts (id text NOT NULL, value text NOT NULL);
        CREATE INDEX texts_id ON texts (id);
        CREATE INDEX texts_value ON texts USING bm25 (value) WITH (text_config = 'english')`);
      let rows = 0;
      const grow = async (more: number) => {
        for (const table of ['plain', 'texts'])
          await db.exec(`INSERT INTO ${table} SELECT 'item-' || n, 'row ' || n || ' ' || repeat('word ', 40)
            FROM generate_series(${rows + 1}, ${rows + more}) n`);
        rows += more;
      };
      const analyzedRows = async (table: string) =>
        (await db.query<{ n: number }>(`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = '${table}'`))[0]!.n;
      const analyzedAt = async (table: string, n: number) => {
        // The maintenance runs every few seconds.
        while ((await analyzedRows(table)) !== n) await new Promise((resolve) => setTimeout(resolve, 250));
      };
      await grow(2_000);
      await analyzedAt('plain', 2_000);
      await analyzedAt('texts', 2_000);
      await grow(28_000);
      await analyzedAt('plain', 30_000);
      // A round later, the BM25 table, fifteen times as large, is still as it was first analyzed.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(await analyzedRows('texts')).toBe(2_000);
      const ids = Array.from({ length: 500 }, (_, i) => `item-${i * 59 + 1}`);
      const plan = await db.query<{ 'QUERY PLAN': string }>('EXPLAIN SELECT * FROM texts WHERE id = ANY($1::text[])', [ids]);
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Scan|Bitmap Index Scan/);
    } finally {
      await db.close();
    }
  });
});

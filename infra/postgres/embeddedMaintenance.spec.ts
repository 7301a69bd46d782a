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

  it('lets the BM25 index hold up to 16 segments a level before it merges them', async () => {
    const db = await openPglite();
    try {
      await db.exec(`CREATE EXTENSION IF NOT EXISTS pg_textsearch;
        SET pg_textsearch.memtable_pages_threshold = 1;
        CREATE TABLE t (id serial, value text);
        CREATE INDEX t_bm25 ON t USING bm25 (value) WITH (text_config = 'english')`);
      // A memtable of one page: each of these inserts writes it out as a segment of its own.
      for (let i = 0; i < 12; i++) {
        await db.query(`INSERT INTO t (value) SELECT 'alpha beta ' || g || ' gamma ' || repeat('w' || g || ' ', 50) FROM generate_series(1, 400) g`);
      }
      const [row] = await db.query<{ summary: string }>(`SELECT bm25_summarize_index('t_bm25') AS summary`);
      const segments = Number(/Total: (\d+) segments/.exec(row!.summary)?.[1]);
      // pg_textsearch's default of 8 would have merged them into 3.
      expect(segments).toBeGreaterThan(8);
      expect(segments).toBeLessThan(16);
      // Every row is still found, from whichever segment holds it.
      await db.exec('SET enable_seqscan = off');
      const [found] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT bm25_get_current_score() AS score FROM t
           ORDER BY value <@> to_bm25query('alpha', 't_bm25') LIMIT 10000) AS ranked WHERE score < 0`,
      );
      expect(found!.n).toBe(4800);
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
});

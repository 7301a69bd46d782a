import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openPglite, type Database } from './database.js';

const BLOCK = 8192;
const FILE_BYTES = 4 * 1024 * 1024;

/**
 * Writes a file of FILE_BYTES block by block, as Postgres extends a relation, through the
 * database's own file system; answers how many times its storage was replaced by a larger copy,
 * and whether it reads back whole.
 */
const writeFileByBlocks = (pglite: PGlite, path: string): { copies: number; intact: boolean } => {
  const fs = pglite.Module.FS;
  const stream = fs.open(path, 'w+');
  const storages = new Set<unknown>();
  const block = new Uint8Array(BLOCK);
  for (let offset = 0; offset < FILE_BYTES; offset += BLOCK) {
    block.fill((offset / BLOCK) % 251);
    fs.write(stream, block, 0, BLOCK);
    storages.add((fs.lookupPath(path, {}).node as unknown as { contents: unknown }).contents);
  }
  fs.close(stream);
  const written = fs.readFile(path);
  const intact =
    written.length === FILE_BYTES && written.every((byte, i) => byte === Math.floor(i / BLOCK) % 251);
  fs.unlink(path);
  return { copies: storages.size - 1, intact };
};

describe('in-memory database files', () => {
  let db: Database | undefined;

  /** Opens the database as the ledger does, with the PGlite instance beneath it. */
  const open = async (dataDir?: string): Promise<{ database: Database; pglite: PGlite }> => {
    const create = vi.spyOn(PGlite, 'create');
    const database = (db = await openPglite(dataDir));
    return { database, pglite: await (create.mock.results[0]!.value as Promise<PGlite>) };
  };

  afterEach(async () => {
    await db?.close();
    db = undefined;
    vi.restoreAllMocks();
  });

  it('grow by doubling, so a file is copied a few times as it grows, and keep every byte', async () => {
    const { database, pglite } = await open();

    // 8 KiB to 4 MiB by doubling is 9 copies; growing by an eighth past 1 MiB, MEMFS's own rule, is 19.
    expect(writeFileByBlocks(pglite, '/tmp/grown')).toEqual({ copies: 9, intact: true });
    // The database works on it: a table of several MiB written and read back.
    await database.exec(
      `CREATE TABLE filler AS SELECT n, repeat('x', 500) AS text FROM generate_series(1, 20000) n`,
    );
    expect(
      await database.query(`SELECT count(*)::int AS rows, sum(length(text))::int AS bytes FROM filler`),
    ).toEqual([{ rows: 20_000, bytes: 10_000_000 }]);
  });

  it("keep MEMFS's own growth in a database with a data directory, whose files are on disk", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctx-memfiles-'));
    try {
      const { pglite } = await open(dir);
      expect(writeFileByBlocks(pglite, '/tmp/grown')).toEqual({ copies: 19, intact: true });
    } finally {
      await db?.close();
      db = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { messages } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { inBackground } from '../../src/ports/database.js';
import { openPgliteThread, type ThreadedDatabase } from './threadedPglite.js';

describe('the embedded database in its own thread', () => {
  let db: ThreadedDatabase;
  beforeAll(async () => {
    db = await openPgliteThread(mkdtempSync(path.join(tmpdir(), 'ctx-thread-')));
    await db.exec('CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)');
  });
  afterAll(() => db.close());

  const names = async () => (await db.query<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name);

  it('answers rows with their types, and text rows of prepared statements', async () => {
    const [row] = await db.query<{ n: number; at: Date; bytes: Uint8Array; doc: unknown }>(
      `SELECT 1::int AS n, '2026-01-02T03:04:05Z'::timestamptz AS at, '\\x0102'::bytea AS bytes, $1::jsonb AS doc`,
      [JSON.stringify({ a: [1] })],
    );
    expect(row).toEqual({ n: 1, at: new Date('2026-01-02T03:04:05Z'), bytes: new Uint8Array([1, 2]), doc: { a: [1] } });
    expect(await db.textRows!('SELECT $1::int * 2, NULL', ['21'])).toEqual([['42', null]]);
  });

  it('keeps a Postgres error whole: its class, SQLSTATE, constraint, table and detail', async () => {
    await db.query(`INSERT INTO items VALUES (1, 'one')`);
    for (const attempt of [
      db.query(`INSERT INTO items VALUES ($1, $2)`, [1, 'again']),
      db.textRows!('INSERT INTO items VALUES ($1, $2)', ['1', 'again']),
      db.transaction((tx) => tx.query(`INSERT INTO items VALUES (1, 'again')`)),
    ]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(messages.DatabaseError);
      expect(error).toMatchObject({
        code: '23505',
        constraint: 'items_pkey',
        table: 'items',
        schema: 'public',
        severity: 'ERROR',
        detail: 'Key (id)=(1) already exists.',
        message: expect.stringContaining('duplicate key') as string,
      });
    }
    await expect(db.query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    await expect(db.exec('SELEC 1')).rejects.toMatchObject({ code: '42601', position: '1' });
    expect(await names()).toEqual(['one']);
  });

  it('rolls back everything a transaction wrote when its function throws, with the caller seeing its own error', async () => {
    const failure = new Error('changed my mind');
    const thrown = await db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO items VALUES (2, 'two')`);
        await tx.query(`UPDATE items SET name = 'uno' WHERE id = 1`);
        throw failure;
      })
      .catch((e: unknown) => e);
    expect(thrown).toBe(failure);
    expect(await names()).toEqual(['one']);
    expect(await db.transaction(async (tx) => (await tx.query(`INSERT INTO items VALUES (2, 'two') RETURNING id`)).length)).toBe(1);
    expect(await names()).toEqual(['one', 'two']);
  });

  it('runs two transactions begun together one after the other, never interleaved', async () => {
    await db.exec('CREATE TABLE steps (n serial PRIMARY KEY, tx text NOT NULL)');
    const writer = (name: string) =>
      db.transaction(async (tx) => {
        for (let i = 0; i < 5; i++) {
          await tx.query('INSERT INTO steps (tx) VALUES ($1)', [name]);
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
    const outside = db.query(`INSERT INTO steps (tx) VALUES ('outside')`);
    await Promise.all([writer('a'), writer('b'), outside]);
    const order = (await db.query<{ tx: string }>('SELECT tx FROM steps ORDER BY n')).map((r) => r.tx).join('');
    expect(order.replace('outside', '')).toMatch(/^(aaaaabbbbb|bbbbbaaaaa)$/);
    expect(order).toMatch(/^(outside)?[ab]{5}(outside)?[ab]{5}(outside)?$/);
  });

  /** A background transaction that has run `statement` and holds the connection until released. */
  const holdInBackground = async (statement: string) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let begun!: () => void;
    const holding = new Promise<void>((resolve) => (begun = resolve));
    const writing = inBackground(() =>
      db.transaction(async (tx) => {
        await tx.query(statement);
        begun();
        await held;
      }),
    );
    await holding;
    return { release, writing };
  };

  it("gives a request's call the next turn, before background work queued earlier", async () => {
    await db.exec('CREATE TABLE turns (n serial PRIMARY KEY, who text NOT NULL)');
    const { release, writing } = await holdInBackground(`INSERT INTO turns (who) VALUES ('holder')`);
    const queued = [1, 2, 3].map((i) => inBackground(() => db.query('INSERT INTO turns (who) VALUES ($1)', [`background ${i}`])));
    const request = db.query(`INSERT INTO turns (who) VALUES ('request')`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await Promise.all([writing, ...queued, request]);
    const order = (await db.query<{ who: string }>('SELECT who FROM turns ORDER BY n')).map((r) => r.who);
    expect(order).toEqual(['holder', 'request', 'background 1', 'background 2', 'background 3']);
  });

  it('gives background work a turn once requests have had the connection for a while, however many wait', async () => {
    await db.exec('CREATE TABLE shares (n serial PRIMARY KEY, who text NOT NULL)');
    const { release, writing } = await holdInBackground('SELECT 1');
    const background = inBackground(() => db.query(`INSERT INTO shares (who) VALUES ('background')`));
    // Each request holds the connection some 15 ms: four of them are more than requests' share.
    const requests = [1, 2, 3, 4].map((i) =>
      db.query('INSERT INTO shares (who) SELECT $1 FROM pg_sleep(0.015)', [`request ${i}`]),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await Promise.all([writing, background, ...requests]);
    const order = (await db.query<{ who: string }>('SELECT who FROM shares ORDER BY n')).map((r) => r.who);
    expect(order.indexOf('background')).toBeGreaterThan(order.indexOf('request 1'));
    expect(order.indexOf('background')).toBeLessThan(order.indexOf('request 4'));
  });

  it('delivers notifications to the listener until it unlistens', async () => {
    const received: string[] = [];
    const unlisten = await db.listen('changes', (payload) => received.push(payload));
    await db.query(`SELECT pg_notify('changes', 'first')`);
    await db.exec(`NOTIFY changes, 'second'`);
    await db.query('SELECT 1');
    await unlisten();
    await db.query(`SELECT pg_notify('changes', 'third')`);
    await db.query('SELECT 1');
    expect(received).toEqual(['first', 'second']);
  });

  it('keeps what it committed across closing and opening again', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ctx-thread-'));
    const first = await openPgliteThread(dataDir);
    await first.exec('CREATE TABLE kept (v text)');
    const write = first.transaction(async (tx) => {
      await tx.query(`INSERT INTO kept VALUES ('in flight')`);
      await new Promise((resolve) => setImmediate(resolve));
      await tx.query(`INSERT INTO kept VALUES ('at close')`);
    });
    await first.close();
    await write;
    const again = await openPgliteThread(dataDir);
    expect(await again.query('SELECT v FROM kept')).toEqual([{ v: 'in flight' }, { v: 'at close' }]);
    await again.close();
  });
});

describe('an embedded database thread that dies', () => {
  it('fails pending and later calls with DatabaseUnavailableError instead of hanging', async () => {
    const db = await openPgliteThread();
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let began!: () => void;
    const begun = new Promise<void>((resolve) => (began = resolve));
    const transaction = db.transaction(async (tx) => {
      began();
      await holding;
      return tx.query('SELECT 1');
    });
    await begun;
    // Queued in the thread behind the open transaction: pending when the thread dies.
    const queued = db.query('SELECT 2');
    await db.terminate();
    release();
    await expect(queued).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(transaction).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(db.query('SELECT 3')).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(db.textRows!('SELECT 4', [])).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });
});

describe('a process with the embedded database in a thread', () => {
  /** Runs `body` in a fresh node process (from source, through tsx) with `db` opened in `dataDir`. */
  const runProcess = (dataDir: string, body: string) =>
    promisify(execFile)(process.execPath, [
      '--import',
      import.meta.resolve('tsx'),
      '--input-type=module',
      '-e',
      `const { openPgliteThread } = await import(${JSON.stringify(new URL('./threadedPglite.ts', import.meta.url).href)});
       const db = await openPgliteThread(${JSON.stringify(dataDir)});
       ${body}`,
    ]);

  it('ends once it has closed the database, or when it has nothing left to do', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ctx-thread-'));
    const closed = await runProcess(dataDir, `await db.exec('CREATE TABLE t (v int)'); await db.close(); console.log('closed');`);
    expect(closed.stdout.trim()).toBe('closed');
    const idle = await runProcess(dataDir, `console.log((await db.query('SELECT count(*)::int AS n FROM t'))[0].n);`);
    expect(idle.stdout.trim()).toBe('0');
  });
});

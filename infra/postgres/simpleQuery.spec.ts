import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from './database.js';
import { ServerError } from './simpleQuery.js';

describe('text rows over the simple-query protocol (embedded)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite();
    await db.exec('CREATE TABLE items (id int PRIMARY KEY, name text)');
  });
  afterAll(() => db.close());

  it('answers every row with its values as text, NULL as null', async () => {
    await db.exec(`INSERT INTO items VALUES (1, 'één'), (2, NULL)`);
    expect(await db.textRows!('SELECT id, name, id * 10 FROM items ORDER BY id')).toEqual([
      ['1', 'één', '10'],
      ['2', null, '20'],
    ]);
    expect(await db.textRows!('SELECT id FROM items WHERE false')).toEqual([]);
  });

  it("throws the server's error with its SQLSTATE, detail and constraint", async () => {
    const failed = await db.textRows!(`INSERT INTO items VALUES (1, 'again')`).catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(ServerError);
    expect(failed).toMatchObject({
      code: '23505',
      constraint: 'items_pkey',
      detail: 'Key (id)=(1) already exists.',
    });
    await expect(db.textRows!('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    expect(await db.textRows!('SELECT count(*) FROM items')).toEqual([['2']]);
  });

  it('waits for an open transaction instead of running inside it', async () => {
    let inserted!: () => void;
    const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
    const rolledBack = db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO items VALUES (3, 'pending')`);
        inserted();
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await insertedOnce;
    expect(await db.textRows!('SELECT count(*) FROM items WHERE id = 3')).toEqual([['0']]);
    await rolledBack;
  });
});

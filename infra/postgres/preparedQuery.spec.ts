import { messages } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayParam } from './arrayParam.js';
import { openPglite, type Database } from './database.js';

describe('text rows of prepared statements (embedded)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite();
    await db.exec('CREATE TABLE items (id int PRIMARY KEY, name text)');
  });
  afterAll(() => db.close());

  const preparedCount = async (sql: string) =>
    (
      await db.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM pg_prepared_statements WHERE statement = $1',
        [sql],
      )
    )[0]?.count;

  it('answers every row with its values as text, NULL as null', async () => {
    await db.exec(`INSERT INTO items VALUES (1, 'één'), (2, NULL)`);
    expect(await db.textRows!('SELECT id, name, id * $1 FROM items ORDER BY id', ['10'])).toEqual([
      ['1', 'één', '10'],
      ['2', null, '20'],
    ]);
    expect(await db.textRows!('SELECT id FROM items WHERE false', [])).toEqual([]);
  });

  it('passes parameters as they are: quotes, backslashes, any script, NULL', async () => {
    const text = `it's a \\ "test" ☃ 𝄞`;
    expect(await db.textRows!('SELECT $1::text, $2::text IS NULL', [text, null])).toEqual([[text, 't']]);
  });

  it('passes arrays whole, in binary: every element type, NULLs, any text, none at all', async () => {
    const texts = ['plain', `it's a \\ "test", {braced}`, '☃ 𝄞', '', null, 'NULL'];
    expect(
      await db.textRows!(
        'SELECT t, t IS NULL FROM unnest($1::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n',
        [arrayParam('text', texts)],
      ),
    ).toEqual(texts.map((t) => [t, t === null ? 't' : 'f']));

    const documents = [JSON.stringify({ quote: '"', nested: [1, { snow: '☃' }] }), '[]', '"text"'];
    expect(
      await db.textRows!(
        'SELECT d::text, json_typeof(d) FROM unnest($1::json[]) WITH ORDINALITY AS x(d, n) ORDER BY n',
        [arrayParam('json', documents)],
      ),
    ).toEqual([
      [documents[0], 'object'],
      ['[]', 'array'],
      ['"text"', 'string'],
    ]);

    const uuid = crypto.randomUUID();
    expect(
      await db.textRows!('SELECT $1::integer[]::text, $2::uuid[]::text, cardinality($3::text[])', [
        arrayParam('int4', [0, -1, 2_147_483_647, null]),
        arrayParam('uuid', [uuid, null]),
        arrayParam('text', []),
      ]),
    ).toEqual([['{0,-1,2147483647,NULL}', `{${uuid},NULL}`, '0']]);
  });

  it("refuses invalid JSON in an array with the server's error", async () => {
    await expect(
      db.textRows!('SELECT cardinality($1::json[])', [arrayParam('json', ['{"open":'])]),
    ).rejects.toMatchObject({
      code: '22P02',
    });
  });

  it('prepares a statement once and runs it again with other parameters', async () => {
    const sql = 'SELECT name FROM items WHERE id = $1';
    expect(await db.textRows!(sql, ['1'])).toEqual([['één']]);
    expect(await db.textRows!(sql, ['2'])).toEqual([[null]]);
    expect(await preparedCount(sql)).toBe(1);
  });

  it("throws the server's error with its SQLSTATE, detail and constraint", async () => {
    const failed = await db.textRows!('INSERT INTO items VALUES ($1, $2)', ['1', 'again']).catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(messages.DatabaseError);
    expect(failed).toMatchObject({
      code: '23505',
      constraint: 'items_pkey',
      detail: 'Key (id)=(1) already exists.',
    });
    expect(await db.textRows!('SELECT count(*) FROM items', [])).toEqual([['2']]);
  });

  it('keeps a statement that failed when run, and prepares none that failed to parse', async () => {
    const division = 'SELECT 10 / $1::int';
    await expect(db.textRows!(division, ['0'])).rejects.toMatchObject({ code: '22012' });
    expect(await db.textRows!(division, ['5'])).toEqual([['2']]);
    expect(await preparedCount(division)).toBe(1);

    const broken = 'SELEC $1::int';
    await expect(db.textRows!(broken, ['1'])).rejects.toMatchObject({ code: '42601' });
    await expect(db.textRows!(broken, ['1'])).rejects.toMatchObject({ code: '42601' });
    expect(await db.textRows!('SELECT $1::int + 1', ['1'])).toEqual([['2']]);
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
    expect(await db.textRows!('SELECT count(*) FROM items WHERE id = $1', ['3'])).toEqual([['0']]);
    await rolledBack;
  });
});

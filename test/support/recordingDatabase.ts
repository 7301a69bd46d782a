import type { Database } from '../../infra/postgres/database.js';

/** A statement sent through a recording database, and whether it ran inside a transaction. */
export interface Recorded {
  sql: string;
  inTransaction: boolean;
}

/** `db`, recording every statement sent through it into `statements`, in transactions too. */
export const recordingDatabase = (db: Database, statements: Recorded[]): Database => {
  const record = (runner: Pick<Database, 'query'>, inTransaction: boolean): Pick<Database, 'query'> => ({
    query: <R>(sql: string, params?: readonly unknown[]) => {
      statements.push({ sql, inTransaction });
      return runner.query<R>(sql, params);
    },
  });
  return {
    ...db,
    ...record(db, false),
    exec: (script) => {
      statements.push({ sql: script, inTransaction: false });
      return db.exec(script);
    },
    transaction: (fn) => db.transaction((tx) => fn({ ...tx, ...record(tx, true) })),
  };
};

/** The statements among `statements` that build an index. */
export const indexBuilds = (statements: readonly Recorded[]): Recorded[] =>
  statements.filter(({ sql }) => /CREATE INDEX/i.test(sql));

/**
 * SQL that leaves `column` of `table` out of ANALYZE's statistics. For the columns that hold a
 * row's payload (a chunk's indexed value, a blob's text, an event's data): no query filters or
 * sorts rows by them, and sampling them was most of ANALYZE's time. The embedded database analyzes
 * its tables as they grow (see `maintaining` in database.ts), and every statement waits meanwhile:
 * at 100,000 chunks, the keyword index's table took 1.65 s to analyze, and 0.33 s without its
 * value. Changes the catalog only when the column still has statistics, so that opening a store
 * does not lock its tables again.
 */
export const withoutStatistics = (table: string, column: string): string => `
DO $$ BEGIN
  IF (SELECT attstattarget IS DISTINCT FROM 0 FROM pg_attribute
      WHERE attrelid = '${table}'::regclass AND attname = '${column}') THEN
    ALTER TABLE ${table} ALTER COLUMN ${column} SET STATISTICS 0;
  END IF;
END $$;`;

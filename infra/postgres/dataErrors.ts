import { UnprojectableEventError } from '../../src/ports/projections.js';

/**
 * Postgres data exceptions (SQLSTATE class 22: text it cannot store, malformed JSON, values out of
 * range) fail the same way on every retry, unlike a lost connection.
 */
const isDataException = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
};

/** A data exception as the projection port's UnprojectableEventError; any other error unchanged. */
export const asUnprojectable = (error: unknown): unknown =>
  isDataException(error)
    ? new UnprojectableEventError(`The database refused the batch's data: ${(error as Error).message}`, { cause: error })
    : error;

/** Runs a sink's write, translating data exceptions. */
export const writingProjection = async <T>(write: () => Promise<T>): Promise<T> => {
  try {
    return await write();
  } catch (error) {
    throw asUnprojectable(error);
  }
};

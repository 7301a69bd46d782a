import { AppError, classifyError } from '../errors.js';

export const print = (value: string): void => {
  process.stdout.write(value.endsWith('\n') ? value : `${value}\n`);
};

/** Keys whose values are data as written (event payloads, user metadata, vocabulary maps), not field names. */
const VERBATIM = new Set(['data', 'metadata', 'subtypes', 'relations']);

const snake = (key: string) => key.replace(/[a-z0-9][A-Z]/g, (pair) => `${pair[0]}_${pair[1]!.toLowerCase()}`);

/** CLI JSON speaks snake_case, as the REST API does, whatever the operation's own casing. */
export const snakeKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value && typeof value === 'object' && value.constructor === Object) {
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => [snake(key), VERBATIM.has(key) ? v : snakeKeys(v)]),
    );
  }
  return value;
};

export const printJson = (value: unknown): void => print(JSON.stringify(snakeKeys(value), null, 2));

/** Prints `value` as JSON with `--json`, else as `text(value)`. */
export const printResult = <T>(value: T, json: boolean | undefined, text: (value: T) => string): void =>
  json ? printJson(value) : print(text(value));

/**
 * The CLI's one error mapper: one line on stderr for an expected failure (the stack only for a
 * bug), and the exit code: 2 for bad input or configuration (catalogue status 400, or an error
 * that asks for exit status 2), 1 for any other failure.
 */
export const reportError = (error: unknown): number => {
  const message = error instanceof AppError ? error.message : ((error as Error).stack ?? String(error));
  process.stderr.write(`ctx: ${message}\n`);
  if (!(error instanceof AppError)) return 1;
  return error.statusCode === 2 || classifyError(error).status === 400 ? 2 : 1;
};

/** `ctx history | head`: when the reader goes away, stop quietly instead of dying on EPIPE. */
export const exitWhenStdoutCloses = (): void => {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
};

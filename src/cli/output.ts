import { forTerminal } from './terminalText.js';

export const print = (value: string): void => {
  const safe = forTerminal(value);
  process.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
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

/** `ctx history | head`: when the reader goes away, stop quietly instead of dying on EPIPE. */
export const exitWhenStdoutCloses = (): void => {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
};

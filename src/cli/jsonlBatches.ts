import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import { ValidationError } from '../errors.js';
import { toStorableText } from '../domain/text.js';

/**
 * How a JSONL file is sent: at most this many lines, and about this many bytes of JSON, per call.
 * Within the bulk operation's limits (1,000 documents) and a server's request body limit (1 MiB at
 * most), so that a file of any size goes through without raising either.
 */
export const JSONL_BATCH = { items: 500, bytes: 768 * 1024 } as const;

/** Standard input, as `--jsonl -` names it. */
const STANDARD_INPUT = '-';

/**
 * Whether the file can be read twice, counted first and then sent: a regular file can; standard
 * input, a pipe (`<(zcat corpus.jsonl.gz)`) or a device is read once, as it comes.
 */
const isRereadable = (file: string) => {
  if (file === STANDARD_INPUT) return false;
  try {
    return statSync(file).isFile();
  } catch {
    return true; // Reading it says why it cannot be read.
  }
};

/** Whether a regular file starts as gzip does: a `corpus.jsonl.gz` is read through gunzip, whatever its name. */
const isGzip = (file: string) => {
  try {
    const fd = openSync(file, 'r');
    try {
      const head = Buffer.alloc(2);
      return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false; // The stream below says why it cannot be read.
  }
};

const opened = (file: string) => {
  const raw: Readable = file === STANDARD_INPUT ? process.stdin : createReadStream(file);
  const stream: Readable = isRereadable(file) && isGzip(file) ? raw.pipe(createGunzip()) : raw;
  stream.setEncoding('utf8');
  // An unreadable file (or a damaged gzip) reads as a clear error, not a stack trace.
  const failed = new Promise<never>((_, reject) => {
    const fail = (error: Error) => reject(new ValidationError(`Cannot read ${file}: ${error.message}`));
    raw.once('error', fail);
    stream.once('error', fail);
  });
  failed.catch(() => undefined);
  return { stream, failed };
};

/**
 * Non-blank lines of a JSONL file, counted as the batches will read them, without holding the file;
 * null for one that can be read only once.
 */
export const countJsonlLines = async (file: string): Promise<number | null> => {
  if (!isRereadable(file)) return null;
  const { stream, failed } = opened(file);
  let count = 0;
  const counting = (async () => {
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) if (line.trim()) count++;
  })();
  await Promise.race([counting, failed]);
  return count;
};

/** A batch of a JSONL file's values, with the line number of each. */
export type JsonlBatch = { values: unknown[]; lines: number[] };

/**
 * One JSON value per line, blank lines skipped, in batches of `JSONL_BATCH` (a line larger than a
 * batch's bytes goes alone); a bad line is reported with its number. Text the ledger cannot store
 * (NUL, unpaired surrogates) is replaced by U+FFFD, as in files read from disk.
 */
export async function* jsonlBatches(file: string, limits: { items: number; bytes: number } = JSONL_BATCH): AsyncGenerator<JsonlBatch> {
  const { stream, failed } = opened(file);
  let values: unknown[] = [];
  let lineNumbers: number[] = [];
  let bytes = 0;
  let number = 0;
  const lines = createInterface({ input: stream, crlfDelay: Infinity })[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([lines.next(), failed]);
    if (next.done) break;
    number++;
    const line = next.value.trim();
    if (!line) continue;
    let value: unknown;
    try {
      value = toStorableText(JSON.parse(line) as unknown);
    } catch (error) {
      throw new ValidationError(`${file}:${number}: not JSON (${(error as Error).message})`);
    }
    const size = Buffer.byteLength(line);
    if (values.length > 0 && (values.length >= limits.items || bytes + size > limits.bytes)) {
      yield { values, lines: lineNumbers };
      values = [];
      lineNumbers = [];
      bytes = 0;
    }
    values.push(value);
    lineNumbers.push(number);
    bytes += size;
  }
  if (values.length > 0) yield { values, lines: lineNumbers };
}

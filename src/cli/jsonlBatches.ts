import { createReadStream, statSync } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import { ValidationError } from '../errors.js';
import { jsonTextNestsDeeperThan, MAX_JSON_DEPTH } from '../domain/nesting.js';
import { toStorableText } from '../domain/text.js';

/**
 * How a JSONL file is sent: at most this many lines, and about this many bytes of JSON, per call.
 * Within the bulk operation's limits (1,000 documents) and a server's request body limit (1 MiB at
 * most), so that a file of any size goes through without raising either.
 */
export const JSONL_BATCH = { items: 500, bytes: 768 * 1024 } as const;

/** Standard input, as `--jsonl -` names it. */
const STANDARD_INPUT = '-';

/** How messages name a JSONL input: its path, or `<stdin>` as compilers name standard input. */
export const jsonlInputName = (file: string) => (file === STANDARD_INPUT ? '<stdin>' : file);

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

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The bytes of `raw`, read through gunzip when they start as gzip's do: a `corpus.jsonl.gz` is
 * unpacked whatever its name, from a file, a pipe or standard input.
 */
async function* unpacked(raw: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const chunks = raw[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < GZIP_MAGIC.length) {
    const next = await chunks.next();
    if (next.done) break;
    head.push(next.value);
    headBytes += next.value.length;
  }
  async function* all() {
    yield* head;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  const start = Buffer.concat(head);
  if (!GZIP_MAGIC.every((byte, i) => start[i] === byte)) return yield* all();
  const gunzip = createGunzip();
  // pipeline, not pipe: a read error reaches gunzip, and so the reader.
  pipeline(Readable.from(all()), gunzip, () => undefined);
  yield* gunzip;
}

/** Why a JSONL input cannot be read: a line too long for a string (a file without line breaks) is said as such. */
const unreadable = (file: string, error: Error) =>
  new ValidationError(
    error instanceof RangeError
      ? `${jsonlInputName(file)}: a line too long to read (hundreds of MB without a line break): JSON lines hold one document per line`
      : `Cannot read ${jsonlInputName(file)}: ${error.message}`,
  );

const rethrowUnreadable = (file: string) => (error: unknown) => {
  throw error instanceof ValidationError ? error : unreadable(file, error as Error);
};

const opened = (file: string) => {
  const raw: Readable = file === STANDARD_INPUT ? process.stdin : createReadStream(file);
  const stream = Readable.from(unpacked(raw), { objectMode: false });
  stream.setEncoding('utf8');
  // An unreadable file (or a damaged gzip) reads as a clear error, not a stack trace.
  const failed = new Promise<never>((_, reject) => {
    const fail = (error: Error) => reject(unreadable(file, error));
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
  await Promise.race([counting, failed]).catch(rethrowUnreadable(file));
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
    const next = await Promise.race([lines.next(), failed]).catch(rethrowUnreadable(file));
    if (next.done) break;
    number++;
    const line = next.value.trim();
    if (!line) continue;
    if (jsonTextNestsDeeperThan(line, MAX_JSON_DEPTH))
      throw new ValidationError(`${jsonlInputName(file)}:${number}: nested more than ${MAX_JSON_DEPTH} levels deep`);
    let value: unknown;
    try {
      value = toStorableText(JSON.parse(line) as unknown);
    } catch (error) {
      throw new ValidationError(`${jsonlInputName(file)}:${number}: not JSON (${(error as Error).message})`);
    }
    if (Array.isArray(value)) {
      throw new ValidationError(
        `${jsonlInputName(file)}:${number}: a JSON array, not a document: JSON lines hold one document per line ` +
          "(jq -c '.[]' turns an array into them)",
      );
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

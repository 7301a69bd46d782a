/**
 * A prepared statement run in one exchange of the Postgres wire protocol, its answer read as text:
 * Parse (the first time only; the statement then stays prepared and planned for the session), Bind
 * with text parameters, Execute and Sync in one message, and the rows (or the error) answered.
 * Embedded appends use it: PGlite's own query() takes five exchanges and parses results in general,
 * and a statement sent as plain text is planned again on every call.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const EXECUTE = 0x45; // 'E'
const SYNC = 0x53; // 'S'
const PARSE_COMPLETE = 0x31; // '1'
const DATA_ROW = 0x44; // 'D'
const ERROR_RESPONSE = 0x45; // 'E'

/** An error the server answered with; `code` is its SQLSTATE, as on errors of the drivers. */
export class ServerError extends Error {
  override name = 'ServerError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly detail: string | undefined,
    readonly constraint: string | undefined,
  ) {
    super(message);
  }
}

const cString = (text: string): Uint8Array => encoder.encode(`${text}\0`);

const int16 = (value: number): Uint8Array => {
  const bytes = new Uint8Array(2);
  new DataView(bytes.buffer).setInt16(0, value);
  return bytes;
};

const int32 = (value: number): Uint8Array => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, value);
  return bytes;
};

/** A message: its type, its length, and its parts. */
const message = (type: number, parts: Uint8Array[]): Uint8Array[] => {
  const header = new Uint8Array(5);
  header[0] = type;
  new DataView(header.buffer).setInt32(1, 4 + parts.reduce((sum, part) => sum + part.length, 0));
  return [header, ...parts];
};

/** A parameter value: its length (-1 for NULL), then its bytes. */
const value = (param: string | null): Uint8Array[] => {
  if (param === null) return [int32(-1)];
  const bytes = encoder.encode(param);
  return [int32(bytes.length), bytes];
};

/**
 * The exchange that runs the prepared statement `name` with `params` as text; with `sql`, it first
 * prepares it under that name (parameter types inferred from the statement).
 */
export const preparedQueryMessage = (
  name: string,
  sql: string | undefined,
  params: readonly (string | null)[],
): Uint8Array => {
  const parts = [
    ...(sql === undefined ? [] : message(PARSE, [cString(name), cString(sql), int16(0)])),
    ...message(BIND, [
      cString(''),
      cString(name),
      int16(0),
      int16(params.length),
      ...params.flatMap(value),
      int16(0),
    ]),
    ...message(EXECUTE, [cString(''), int32(0)]),
    ...message(SYNC, []),
  ];
  const exchange = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    exchange.set(part, at);
    at += part.length;
  }
  return exchange;
};

/** True when the answer says a statement was prepared: a failed Parse prepares nothing. */
export const preparedIn = (answer: Uint8Array): boolean => {
  const view = new DataView(answer.buffer, answer.byteOffset, answer.byteLength);
  for (let at = 0; at + 5 <= answer.length; at += 1 + view.getInt32(at + 1)) {
    if (answer[at] === PARSE_COMPLETE) return true;
  }
  return false;
};

/** The fields of an ErrorResponse: a one-byte code and a C string each, up to a zero byte. */
const serverError = (body: Uint8Array): ServerError => {
  const fields = new Map<string, string>();
  for (let at = 0; at < body.length && body[at] !== 0;) {
    const end = body.indexOf(0, at + 1);
    fields.set(String.fromCharCode(body[at]!), decoder.decode(body.subarray(at + 1, end)));
    at = end + 1;
  }
  return new ServerError(
    fields.get('M') ?? 'server error',
    fields.get('C'),
    fields.get('D'),
    fields.get('n'),
  );
};

/**
 * The rows of an answer, each value as text (null for SQL NULL); throws the error it holds instead.
 * Other messages (parse and bind complete, command tag, notices, ready) are passed over.
 */
export const textRowsOf = (answer: Uint8Array): (string | null)[][] => {
  const view = new DataView(answer.buffer, answer.byteOffset, answer.byteLength);
  const rows: (string | null)[][] = [];
  let error: ServerError | undefined;
  for (let at = 0; at + 5 <= answer.length;) {
    const type = answer[at];
    const end = at + 1 + view.getInt32(at + 1);
    if (type === DATA_ROW) {
      const row: (string | null)[] = [];
      let field = at + 7;
      for (let columns = view.getInt16(at + 5); columns > 0; columns--) {
        const length = view.getInt32(field);
        field += 4;
        row.push(length < 0 ? null : decoder.decode(answer.subarray(field, field + length)));
        field += Math.max(length, 0);
      }
      rows.push(row);
    } else if (type === ERROR_RESPONSE) {
      error ??= serverError(answer.subarray(at + 5, end));
    }
    at = end;
  }
  if (error) throw error;
  return rows;
};

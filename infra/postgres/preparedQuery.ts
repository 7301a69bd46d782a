/**
 * A prepared statement run in one exchange of the Postgres wire protocol: Parse (the first time
 * only; the statement then stays prepared and planned for the session), Bind with text parameters,
 * Execute and Sync, in one message. The embedded event store runs its statements so: PGlite's own
 * query() takes five exchanges and converts every value, and a statement sent as plain text is
 * planned again on every call.
 */

const encoder = new TextEncoder();

const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const EXECUTE = 0x45; // 'E'
const SYNC = 0x53; // 'S'

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

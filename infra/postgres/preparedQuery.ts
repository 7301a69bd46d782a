import { writeArray, type ArrayParam } from './arrayParam.js';
import { ByteWriter } from './byteWriter.js';

/**
 * A prepared statement run in one exchange of the Postgres wire protocol: Parse (the first time
 * only; the statement then stays prepared and planned for the session), Bind, Execute and Sync, in
 * one message. The embedded event store runs its statements so: PGlite's own query() takes five
 * exchanges and converts every value, and a statement sent as plain text is planned again on every
 * call.
 */

const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const EXECUTE = 0x45; // 'E'
const SYNC = 0x53; // 'S'
const TEXT_FORMAT = 0;
const BINARY_FORMAT = 1;

/** A parameter: text, NULL, or an array, which goes in binary. */
export type PreparedParam = string | null | ArrayParam;

/**
 * The exchange that runs the prepared statement `name` with `params`; with `sql`, it first prepares
 * it under that name (parameter types inferred from the statement). Rows are answered as text.
 */
export const preparedQueryMessage = (
  name: string,
  sql: string | undefined,
  params: readonly PreparedParam[],
): Uint8Array => {
  const out = new ByteWriter();
  if (sql !== undefined) {
    out.message(PARSE, () => {
      out.cString(name);
      out.cString(sql);
      out.int16(0);
    });
  }
  out.message(BIND, () => {
    out.cString('');
    out.cString(name);
    out.int16(params.length);
    for (const param of params)
      out.int16(param === null || typeof param === 'string' ? TEXT_FORMAT : BINARY_FORMAT);
    out.int16(params.length);
    for (const param of params) {
      if (param === null) out.int32(-1);
      else if (typeof param === 'string') out.sized(() => out.utf8(param));
      else out.sized(() => writeArray(out, param));
    }
    out.int16(0);
  });
  out.message(EXECUTE, () => {
    out.cString('');
    out.int32(0);
  });
  out.message(SYNC, () => undefined);
  return out.written();
};

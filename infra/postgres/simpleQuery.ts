/**
 * The simple-query exchange of the Postgres wire protocol, for a statement whose answer is read as
 * text: the Query message, and the rows (or the error) the server answers it with. Embedded
 * appends use it to skip PGlite's general result parsing, which costs about as much as the
 * statement itself.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const QUERY = 0x51; // 'Q'
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

/** A Query message: its type, its length, and the statement as a C string. */
export const queryMessage = (sql: string): Uint8Array => {
  const text = encoder.encode(sql);
  const message = new Uint8Array(text.length + 6);
  message[0] = QUERY;
  new DataView(message.buffer).setInt32(1, text.length + 5);
  message.set(text, 5);
  return message;
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
 * The rows of a simple-query answer, each value as text (null for SQL NULL); throws the error it
 * holds instead. Other messages (row description, command tag, notices, ready) are passed over.
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

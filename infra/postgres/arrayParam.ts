import type { ByteWriter } from './byteWriter.js';

/**
 * Array parameters with their element type. A server is sent them by `pg`, which writes them as
 * array literals; PGlite is sent them in Postgres's binary array format, in which values need no
 * quoting and Postgres has none to undo: for the event store's appends, most of their bytes.
 */

/** Element types and their type OIDs, which the binary format names. */
const ELEMENT_OIDS = { int4: 23, text: 25, json: 114, uuid: 2950 } as const;

export type ArrayElement = keyof typeof ELEMENT_OIDS;

export interface ArrayParam {
  readonly element: ArrayElement;
  /** Numbers for int4, strings otherwise (a uuid in its usual hex form); null for NULL. */
  readonly values: readonly (string | number | null)[];
}

export const arrayParam = (
  element: ArrayElement,
  values: readonly (string | number | null)[],
): ArrayParam => ({
  element,
  values,
});

export const isArrayParam = (value: unknown): value is ArrayParam =>
  typeof value === 'object' && value !== null && 'element' in value && 'values' in value;

const UUID = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i;

const uuidBytes = (uuid: string): Uint8Array => {
  const parts = UUID.exec(uuid);
  if (!parts) throw new TypeError(`Not a uuid: '${uuid}'`);
  return Buffer.from(parts.slice(1).join(''), 'hex');
};

/**
 * The array in binary: dimensions (one), whether it holds NULLs, the element type, its length and
 * lower bound (1), then each element as its length (-1 for NULL) and its bytes.
 */
export const writeArray = (out: ByteWriter, { element, values }: ArrayParam): void => {
  out.int32(1);
  out.int32(values.includes(null) ? 1 : 0);
  out.int32(ELEMENT_OIDS[element]);
  out.int32(values.length);
  out.int32(1);
  for (const value of values) {
    if (value === null) {
      out.int32(-1);
    } else if (element === 'int4') {
      out.int32(4);
      out.int32(value as number);
    } else if (element === 'uuid') {
      out.int32(16);
      out.bytes(uuidBytes(value as string));
    } else {
      out.sized(() => out.utf8(value as string));
    }
  }
};

/**
 * A position in `$all`: opaque to callers, totally ordered by plain string comparison.
 *
 * It is two unsigned 64-bit numbers, zero-padded: for the Postgres store (transaction id, global
 * sequence), for EventStoreDB (commit, prepare). Both sort in commit order that way.
 */
export type Position = string & { readonly __brand: 'Position' };

const WIDTH = 20;
const PATTERN = /^\d{20}-\d{20}$/;

export const position = (major: bigint | number | string, minor: bigint | number | string): Position =>
  `${String(major).padStart(WIDTH, '0')}-${String(minor).padStart(WIDTH, '0')}` as Position;

/** Before every event: reading `$all` from here starts at the first event. */
export const START: Position = position(0, 0);

export const isPosition = (value: string): value is Position => PATTERN.test(value);

export const parsePosition = (value: string): Position => {
  if (!isPosition(value)) throw new TypeError(`Not a position: '${value}'`);
  return value;
};

export const positionParts = (p: Position): [bigint, bigint] => {
  const [major, minor] = p.split('-');
  return [BigInt(major ?? 0), BigInt(minor ?? 0)];
};

export const comparePositions = (a: Position, b: Position): number => (a < b ? -1 : a > b ? 1 : 0);

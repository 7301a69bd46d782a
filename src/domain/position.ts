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

const WRITTEN = /^(\d{1,20})-(\d{1,20})$/;

/** A position as people give it back: as stored, or compact as `ctx history` and the console show it (`6566-1022`). */
export const readPosition = (value: string): Position | undefined => {
  const parts = WRITTEN.exec(value);
  return parts ? position(parts[1]!, parts[2]!) : undefined;
};

/** A position without its padding, for people to read: `6566-1022`. */
export const compactPosition = (p: string): string =>
  p
    .split('-')
    .map((part) => part.replace(/^0+(?=\d)/, ''))
    .join('-');

export const parsePosition = (value: string): Position => {
  if (!isPosition(value)) throw new TypeError(`Not a position: '${value}'`);
  return value;
};

export const positionParts = (p: Position): [bigint, bigint] => {
  const [major, minor] = p.split('-');
  return [BigInt(major ?? 0), BigInt(minor ?? 0)];
};

export const comparePositions = (a: Position, b: Position): number => (a < b ? -1 : a > b ? 1 : 0);

import { describe, expect, it } from 'vitest';
import {
  START,
  comparePositions,
  compactPosition,
  isPosition,
  parsePosition,
  position,
  positionParts,
  readPosition,
} from './position.js';

describe('positions in $all', () => {
  it.each([
    [1, 2, '00000000000000000001-00000000000000000002'],
    [0n, 0n, START],
    ['18446744073709551615', '9', '18446744073709551615-00000000000000000009'],
  ])('writes (%s, %s) as %s', (major, minor, written) => {
    expect(position(major, minor)).toBe(written);
    expect(positionParts(position(major, minor))).toEqual([BigInt(major), BigInt(minor)]);
  });

  it.each([
    ['6566-1022', position(6566, 1022)],
    ['00000000000000006566-00000000000000001022', position(6566, 1022)],
    ['0-0', START],
    ['6566', undefined],
    ['a-b', undefined],
    ['-1-2', undefined],
    ['123456789012345678901-1', undefined],
  ])('reads %j back as %s', (text, read) => {
    expect(readPosition(text)).toBe(read);
  });

  it.each([position(6566, 1022), position(10, 0), START])('shows %s compact, and reads it back', (p) => {
    expect(readPosition(compactPosition(p))).toBe(p);
  });

  it('sorts as text in the order of its numbers, across powers of ten', () => {
    const positions = [position(10, 1), position(9, 99), position(10, 0), position(100, 0)];
    expect([...positions].sort(comparePositions)).toEqual([
      position(9, 99),
      position(10, 0),
      position(10, 1),
      position(100, 0),
    ]);
    expect([...positions].sort()).toEqual([...positions].sort(comparePositions));
  });

  it('parses only positions as stored', () => {
    expect(isPosition('6566-1022')).toBe(false);
    expect(parsePosition(position(1, 1))).toBe(position(1, 1));
    expect(() => parsePosition('6566-1022')).toThrow('Not a position');
  });
});

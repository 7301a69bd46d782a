import { describe, expect, it } from 'vitest';
import { decodeText, looksBinary } from './fileContent.js';

const utf16 = (text: string, order: 'le' | 'be') => {
  const le = Buffer.from(`\ufeff${text}`, 'utf16le');
  return order === 'le' ? le : Buffer.from(le).swap16();
};

describe('a file read as text', () => {
  it('is UTF-8, its byte-order mark dropped', () => {
    const withMark = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Café résumé')]);
    expect(looksBinary(withMark)).toBe(false);
    expect(decodeText(withMark)).toBe('Café résumé');
  });

  it('is UTF-16 behind a byte-order mark, in either byte order, though its letters hold NUL bytes', () => {
    for (const order of ['le', 'be'] as const) {
      const content = utf16('Harbour pilot: naïve résumé\r\n', order);
      expect(content.includes(0), order).toBe(true);
      expect(looksBinary(content), order).toBe(false);
      expect(decodeText(content), order).toBe('Harbour pilot: naïve résumé\r\n');
    }
  });

  it('is Windows-1252 when it is not UTF-8 anywhere: a Latin-1 file’s words read as written', () => {
    const latin1 = Buffer.from('\x93Café\x94 résumé naïve, 20 \x80', 'latin1');
    expect(looksBinary(latin1)).toBe(false);
    expect(decodeText(latin1)).toBe('“Café” résumé naïve, 20 €');
  });

  it('is UTF-8 with U+FFFD for the bytes that are not, where the rest is UTF-8', () => {
    const damaged = Buffer.concat([Buffer.from('Café '), Buffer.from([0xe9]), Buffer.from(' résumé')]);
    expect(decodeText(damaged)).toBe('Café \ufffd résumé');
  });

  it('is binary with a NUL in its first 8 KiB, a UTF-16 byte-order mark before NUL characters too', () => {
    expect(looksBinary(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]))).toBe(true);
    expect(looksBinary(new Uint8Array([0xff, 0xfe, 0, 0, 0x41, 0]))).toBe(true);
    expect(looksBinary(Buffer.concat([Buffer.alloc(9000, 0x61), Buffer.from([0])]))).toBe(false);
  });
});

import { toStorableText } from '../../src/domain/text.js';

/** Git's own test: a NUL byte in the first 8 KiB marks a file as binary. */
const BINARY_SNIFF_BYTES = 8 * 1024;

/** The UTF-16 a byte-order mark names: such a text holds a NUL byte in each of its ASCII letters. */
const utf16Of = (content: Uint8Array): 'utf-16le' | 'utf-16be' | null => {
  if (content[0] === 0xff && content[1] === 0xfe) return 'utf-16le';
  if (content[0] === 0xfe && content[1] === 0xff) return 'utf-16be';
  return null;
};

const utf16Text = (content: Uint8Array, encoding: 'utf-16le' | 'utf-16be') =>
  new TextDecoder(encoding).decode(content.subarray(0, BINARY_SNIFF_BYTES));

/** A file is binary when a NUL is among its first 8 KiB (a UTF-16 text's own, behind its byte-order mark, aside). */
export const looksBinary = (content: Uint8Array): boolean => {
  const utf16 = utf16Of(content);
  if (utf16) return utf16Text(content, utf16).includes('\u0000');
  return content.subarray(0, BINARY_SNIFF_BYTES).includes(0);
};

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Repairing = new TextDecoder('utf-8');
/**
 * Windows-1252's characters for the bytes 0x80 to 0x9F (Latin-1's control codes), where it differs
 * from Latin-1: Node's `TextDecoder('windows-1252')` decodes them as Latin-1 does.
 */
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const windows1252 = (content: Uint8Array) =>
  Buffer.from(content.buffer, content.byteOffset, content.byteLength)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]!);

/** Whether text has a character beyond ASCII that UTF-8 decoding made, not the replacement for bytes it could not. */
const hasDecodedNonAscii = (text: string) => /[\u0080-\ufffc\ufffe-\uffff]/.test(text);

/**
 * A file's text, its byte-order mark dropped: UTF-8; UTF-16 behind its byte-order mark; and bytes
 * that are not UTF-8 anywhere (a Latin-1 or Windows file, `caf\xe9`) as Windows-1252, so that its
 * words are found as written. In a UTF-8 file damaged here and there, and in place of NUL bytes
 * past the binary sniff, U+FFFD: a file's text can always be stored.
 */
export const decodeText = (content: Uint8Array): string => {
  const utf16 = utf16Of(content);
  if (utf16) return toStorableText(new TextDecoder(utf16).decode(content));
  try {
    return toStorableText(utf8.decode(content));
  } catch {
    const repaired = utf8Repairing.decode(content);
    return toStorableText(hasDecodedNonAscii(repaired) ? repaired : windows1252(content));
  }
};

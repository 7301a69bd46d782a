import { toStorableText } from '../../src/domain/text.js';

/** Git's own test: a NUL byte in the first 8 KiB marks a file as binary. */
const BINARY_SNIFF_BYTES = 8 * 1024;

export const looksBinary = (content: Uint8Array): boolean =>
  content.subarray(0, BINARY_SNIFF_BYTES).includes(0);

const utf8 = new TextDecoder('utf-8');

/**
 * Decodes UTF-8, dropping a byte-order mark; invalid sequences, and NUL bytes past the binary
 * sniff, become U+FFFD rather than failing: a file's text can always be stored.
 */
export const decodeText = (content: Uint8Array): string => toStorableText(utf8.decode(content));

import { createHash, randomUUID } from 'node:crypto';

/** A name-based (version 5 style) UUID: the same inputs always give the same id. */
export const deterministicUuid = (...parts: readonly string[]): string => {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

export const newId = (): string => randomUUID();

/** The sha256 of a text's UTF-8 bytes, as hex: how content is addressed everywhere. */
export const contentHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

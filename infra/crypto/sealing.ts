import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedText } from '../../src/domain/protectedText.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;

/**
 * Random IVs drawn from a pool that is refilled by the system's CSPRNG, as node's own randomUUID
 * does: a batch of notes costs one draw, not one per note. Each IV is handed out once.
 */
const ivPool = { bytes: Buffer.alloc(0), next: 0 };
const nextIv = (): Buffer => {
  if (ivPool.next + IV_BYTES > ivPool.bytes.length) {
    ivPool.bytes = randomBytes(IV_BYTES * 256);
    ivPool.next = 0;
  }
  const iv = Buffer.from(ivPool.bytes.subarray(ivPool.next, ivPool.next + IV_BYTES));
  ivPool.next += IV_BYTES;
  return iv;
};

/** Seals `text` under a 32-byte data key; the key id is authenticated too, so a sealed text cannot be moved to another key. */
export const sealWith = (key: Buffer, keyId: string, text: string): SealedText => {
  const iv = nextIv();
  const cipher = createCipheriv(ALGORITHM, key, iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return {
    keyId,
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
};

/** Opens a sealed text; throws when the key is not the one it was sealed with or the text was altered. */
export const openWith = (key: Buffer, sealed: SealedText): string => {
  const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(sealed.keyId, 'utf8'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([
    decipher.update(Buffer.from(sealed.ciphertext, 'base64')),
    decipher.final(),
  ]).toString('utf8');
};

export const newDataKey = (): Buffer => randomBytes(32);

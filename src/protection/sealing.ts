import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedText } from './protectedText.js';

const ALGORITHM = 'aes-256-gcm';

/** Seals `text` under a 32-byte data key; the key id is authenticated too, so a sealed text cannot be moved to another key. */
export const sealWith = (key: Buffer, keyId: string, text: string): SealedText => {
  const iv = randomBytes(12);
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

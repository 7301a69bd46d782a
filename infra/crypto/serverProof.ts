import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A server proves it is the one that wrote its data directory's `server.json` by answering a
 * nonce with its HMAC under the secret in that file, which only the user can read.
 */

/** A fresh secret or nonce: 32 random bytes, hex. */
export const newSecret = (): string => randomBytes(32).toString('hex');

export const isSecret = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);

export const proofOf = (secret: string, nonce: string): string =>
  createHmac('sha256', secret).update(nonce).digest('hex');

export const isProof = (secret: string, nonce: string, proof: unknown): boolean =>
  isSecret(proof) && timingSafeEqual(Buffer.from(proof, 'hex'), Buffer.from(proofOf(secret, nonce), 'hex'));

import { describe, expect, it } from 'vitest';
import { newDataKey, openWith, sealWith } from './sealing.js';

describe('sealing', () => {
  it('seals every text under a fresh IV, across refills of the IV pool, and opens each', () => {
    const key = newDataKey();
    const sealed = Array.from({ length: 1_000 }, (_, i) => sealWith(key, 'key-1', `note ${i % 10}`));
    expect(new Set(sealed.map((s) => s.iv)).size).toBe(sealed.length);
    expect(sealed.map((s) => openWith(key, s))).toEqual(sealed.map((_, i) => `note ${i % 10}`));
  });

  it('refuses a sealed text moved to another key id or altered', () => {
    const key = newDataKey();
    const sealed = sealWith(key, 'key-1', 'call Ann');
    expect(() => openWith(key, { ...sealed, keyId: 'key-2' })).toThrow();
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0]! ^= 1;
    expect(() => openWith(key, { ...sealed, ciphertext: flipped.toString('base64') })).toThrow();
  });
});

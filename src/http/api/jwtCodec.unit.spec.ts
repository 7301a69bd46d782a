import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { createJwtCodec } from './jwtCodec.js';

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

describe('JWT verification with a public key', () => {
  it.each([
    ['RS256', () => generateKeyPairSync('rsa', { modulusLength: 2048 }), 'RSA-SHA256', undefined],
    ['ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }), 'SHA256', 'ieee-p1363' as const],
  ])('verifies %s tokens signed elsewhere, and cannot sign', async (algorithm, keys, digest, dsaEncoding) => {
    const { publicKey, privateKey } = keys();
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const auth = loadConfig({ env: { CTX_AUTH__ALGORITHM: algorithm, CTX_AUTH__JWT_PUBLIC_KEY: pem } }).auth;
    const codec = (await createJwtCodec(auth))!;
    expect(codec.canSign).toBe(false);
    const sign = (claims: object) => {
      const head = `${b64({ alg: algorithm, typ: 'JWT' })}.${b64(claims)}`;
      return `${head}.${createSign(digest)
        .update(head)
        .sign({ key: privateKey, ...(dsaEncoding ? { dsaEncoding } : {}) }, 'base64url')}`;
    };
    const claims = {
      iss: 'context-engine',
      aud: 'api',
      sub: 'svc',
      scope: 'search:read',
      tenant_id: 'acme',
      exp: now() + 60,
    };
    expect(codec.verify(sign(claims))).toMatchObject({ sub: 'svc', tenant_id: 'acme' });
    expect(() => codec.verify(sign({ ...claims, aud: 'other' }))).toThrow();
    // A token lacking iss or aud is refused: they are configured, so they are required.
    const { iss: _iss, ...withoutIss } = claims;
    const { aud: _aud, ...withoutAud } = claims;
    expect(() => codec.verify(sign(withoutIss))).toThrow(/iss/);
    expect(() => codec.verify(sign(withoutAud))).toThrow(/aud/);
    // An HS256 token "signed" with the public key as secret: the classic algorithm confusion.
    const confused = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
    expect(() =>
      codec.verify(`${confused}.${createHmac('sha256', pem).update(confused).digest('base64url')}`),
    ).toThrow();
  });

  it('refuses RS256 without a public key in config', () => {
    expect(() => loadConfig({ env: { CTX_AUTH__ALGORITHM: 'RS256' } })).toThrow(
      /jwt_public_key|jwtPublicKey/,
    );
  });
});

describe('JWT signing', () => {
  it('signs access tokens that expire after auth.access_ttl_s seconds', async () => {
    const auth = loadConfig({ env: { CTX_AUTH__JWT_SECRET: 'x'.repeat(40), CTX_AUTH__ACCESS_TTL_S: '900' } }).auth;
    const token = (await createJwtCodec(auth))!.sign({ sub: 'ci', scope: 'search:read', tenant_id: 'acme' });
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number };
    expect(claims.exp - claims.iat).toBe(900);
  });
});

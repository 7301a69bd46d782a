import type { Config } from '../../config.js';

export interface AccessClaims {
  sub: string;
  scope: string;
  tenant_id: string;
  /** The refresh token family the token belongs to (tokens this deployment signs): revoked with it. */
  fid?: string;
}

/** Signs (with a shared secret) and verifies access tokens: algorithm, iss, aud, exp and nbf are checked; iss, aud, exp and sub are required. */
export interface JwtCodec {
  canSign: boolean;
  sign(claims: AccessClaims): string;
  verify(token: string): Record<string, unknown>;
}

/**
 * @fastify/jwt on a private instance: the API plugin, MCP over HTTP and the CLI share one verifier
 * without depending on where the plugin is registered. Null when no key is configured; then neither
 * library is loaded.
 */
export const createJwtCodec = async (auth: Config['auth']): Promise<JwtCodec | null> => {
  const key = auth.algorithm === 'HS256' ? auth.jwtSecret : auth.jwtPublicKey;
  if (!key) return null;
  const [{ default: Fastify }, { default: fastifyJwt }] = await Promise.all([import('fastify'), import('@fastify/jwt')]);
  const holder = Fastify({ logger: false });
  await holder.register(fastifyJwt, {
    secret: auth.algorithm === 'HS256' ? key : { public: key },
    sign: {
      algorithm: auth.algorithm,
      iss: auth.issuer,
      aud: auth.audience,
      expiresIn: `${auth.accessTtlS}s`,
    },
    verify: {
      algorithms: [auth.algorithm],
      allowedIss: auth.issuer,
      allowedAud: auth.audience,
      // Checking iss and aud only when present would accept tokens minted for anyone without them.
      requiredClaims: ['exp', 'sub', 'iss', 'aud'],
    },
  });
  await holder.ready();
  const jwt = holder.jwt;
  return {
    canSign: auth.algorithm === 'HS256',
    sign: (claims) => jwt.sign(claims),
    verify: (token) => jwt.verify<Record<string, unknown>>(token),
  };
};

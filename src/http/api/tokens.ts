import {
  issueRefreshToken,
  rotateRefreshToken,
  type RefreshGrant,
} from '../../../commands/rotateRefreshToken.js';
import type { Config } from '../../config.js';
import type { Scope } from '../../domain/auth.js';
import type { CommandContext } from '../../engine/commands.js';
import { UnavailableError } from '../../errors.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { JwtCodec } from './jwtCodec.js';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

const signer = (jwt: JwtCodec | null): JwtCodec => {
  if (!jwt?.canSign)
    throw new UnavailableError(
      'This deployment verifies tokens but cannot sign them: set auth.jwt_secret (HS256)',
    );
  return jwt;
};

const pairOf = (jwt: JwtCodec, grant: RefreshGrant, config: Config): TokenPair => ({
  access_token: jwt.sign({ sub: grant.subject, scope: grant.scopes.join(' '), tenant_id: grant.tenant }),
  refresh_token: grant.refreshToken,
  expires_in: config.auth.accessTtlS,
  token_type: 'Bearer',
});

/** A new access token and the first refresh token of a new family. */
export const issueTokens = async (
  deps: { store: EventStore; jwt: JwtCodec | null; config: Config },
  input: { subject: string; tenant: string; scopes: Scope[] },
  context: CommandContext,
): Promise<TokenPair> => {
  const jwt = signer(deps.jwt);
  const grant = await issueRefreshToken(
    deps.store,
    { ...input, ttlSeconds: deps.config.auth.refreshTtlS },
    context,
  );
  return pairOf(jwt, grant, deps.config);
};

/** `POST /auth/refresh`: rotates the refresh token and signs a fresh access token. */
export const refreshTokens = async (
  deps: { store: EventStore; jwt: JwtCodec | null; config: Config },
  refreshToken: string,
  context: CommandContext,
): Promise<TokenPair> => {
  const jwt = signer(deps.jwt);
  const grant = await rotateRefreshToken(
    deps.store,
    { refreshToken, ttlSeconds: deps.config.auth.refreshTtlS },
    context,
  );
  return pairOf(jwt, grant, deps.config);
};

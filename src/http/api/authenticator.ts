import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { hashSecret } from '../../domain/auth.js';
import { API_KEYS, type ApiKeyRow } from '../../domain/apiKeyView.js';
import { isLoopbackBind, type Config } from '../../config.js';
import { AuthenticationError, SCOPES, type Credential } from '../../domain/auth.js';
import { revokedBecause } from '../../services/credentials.js';
import { DEFAULT_PROJECT } from '../../domain/workspace.js';
import type { ReadModels } from '../../ports/projections.js';
import type { JwtCodec } from './jwtCodec.js';

/** Who is calling, for which tenant (= project), allowed to do what. */
export interface Principal {
  subject: string;
  tenant: string;
  scopes: readonly string[];
  method: 'jwt' | 'api_key' | 'open';
  /** The key or token family authenticated with: what it issues is revoked with it. Absent for tokens signed elsewhere. */
  credential?: Credential;
}

/** The caller of an open (auth off) deployment: every scope, the default project. */
export const OPEN_PRINCIPAL: Principal = {
  subject: 'anonymous',
  tenant: DEFAULT_PROJECT,
  scopes: SCOPES,
  method: 'open',
};

export interface Authenticator {
  enabled: boolean;
  jwt: JwtCodec | null;
  /** The caller, or an AuthenticationError when auth is on and the credentials are missing or bad. */
  authenticate(headers: IncomingHttpHeaders): Promise<Principal>;
}

/** `auto` means on unless the server listens on loopback only. */
export const authEnabled = (config: Config): boolean => {
  if (config.auth.mode !== 'auto') return config.auth.mode === 'on';
  return !isLoopbackBind(config.server.bind);
};

const API_KEY = /^[0-9a-f]{32}$/i;
const KNOWN_SCOPES = new Set<string>(SCOPES);

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export const createAuthenticator = ({
  enabled,
  jwt,
  readModels,
}: {
  enabled: boolean;
  jwt: JwtCodec | null;
  readModels: ReadModels;
}): Authenticator => {
  const byApiKey = async (key: string): Promise<Principal> => {
    if (!API_KEY.test(key))
      throw new AuthenticationError('Malformed API key: expected 32 hexadecimal characters');
    const hash = hashSecret(key.toLowerCase());
    const { items } = await readModels.find<ApiKeyRow>(API_KEYS, { where: { hash }, limit: 1 });
    const row = items[0];
    // The lookup is by hash; the comparison still runs in constant time.
    if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(hash)) || row.revoked) {
      throw new AuthenticationError('Unknown or revoked API key');
    }
    return {
      subject: `apikey:${row.keyId}`,
      tenant: row.tenant,
      scopes: row.scopes,
      method: 'api_key',
      credential: { apiKey: row.keyId },
    };
  };

  const byBearer = async (token: string): Promise<Principal> => {
    if (!jwt) throw new AuthenticationError('Bearer tokens are not accepted: no JWT key is configured');
    let claims: Record<string, unknown>;
    try {
      claims = jwt.verify(token);
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      throw new AuthenticationError(
        code.includes('EXPIRED')
          ? 'Token expired'
          : code.includes('INACTIVE')
            ? 'Token not yet valid'
            : code.includes('MISSING_REQUIRED_CLAIM')
              ? 'Token lacks a required claim: iss, aud, exp and sub are required'
              : 'Invalid token',
      );
    }
    const { sub, scope, tenant_id: tenant, fid } = claims;
    if (typeof sub !== 'string' || typeof tenant !== 'string' || !tenant) {
      throw new AuthenticationError('Token lacks sub or tenant_id');
    }
    // A token this deployment signed belongs to a family: it stops working when the family, or what issued it, is revoked.
    let credential: Credential | undefined;
    if (fid !== undefined) {
      if (typeof fid !== 'string') throw new AuthenticationError('Invalid token');
      credential = { tokenFamily: fid };
      const revoked = await revokedBecause(readModels, credential);
      if (revoked) throw new AuthenticationError(`Token refused: ${revoked}`);
    }
    const scopes = typeof scope === 'string' ? scope.split(' ').filter((s) => KNOWN_SCOPES.has(s)) : [];
    return { subject: sub, tenant, scopes, method: 'jwt', ...(credential ? { credential } : {}) };
  };

  return {
    enabled,
    jwt,
    authenticate: async (headers) => {
      if (!enabled) return OPEN_PRINCIPAL;
      // Every credential sent must be valid: a bad token is refused whatever else comes with it.
      const authorization = header(headers, 'authorization');
      let bearer: Principal | undefined;
      if (authorization) {
        const match = /^Bearer\s+(\S+)$/i.exec(authorization);
        if (!match) throw new AuthenticationError('Expected "Authorization: Bearer <token>"');
        bearer = await byBearer(match[1]!);
      }
      const apiKey = header(headers, 'x-api-key');
      if (apiKey !== undefined) return byApiKey(apiKey.trim());
      if (bearer) return bearer;
      throw new AuthenticationError('Missing credentials: send a bearer token or an X-API-Key header');
    },
  };
};

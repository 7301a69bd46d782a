import { randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AuthenticationError, type AuthEvent, type Credential, type Scope } from '../../src/domain/auth.js';
import { issuerRevokedBecause } from '../../src/services/credentials.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import { newId, UUID_PATTERN } from '../../src/domain/ids.js';
import { commandContext, handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { IllegalStateError, NotFoundError, UnavailableError } from '../../src/errors.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { ReadModels } from '../../src/ports/projections.js';
import type { TokenSigner } from '../../src/ports/tokenSigner.js';
import { hashSecret } from '../../src/domain/auth.js';

/** A refresh token family: one valid token at a time, replaced on every use. */
export interface RefreshFamilyState {
  exists: boolean;
  subject: string;
  tenant: string;
  scopes: Scope[];
  currentHash: string;
  expiresAt: string;
  revoked: boolean;
}

export type RefreshCommand =
  | {
      kind: 'issue';
      familyId: string;
      tokenHash: string;
      subject: string;
      tenant: string;
      scopes: Scope[];
      expiresAt: string;
      issuedWithKey?: string;
      issuedWithFamily?: string;
    }
  | { kind: 'rotate'; familyId: string; presentedHash: string; tokenHash: string; expiresAt: string }
  | { kind: 'revoke'; familyId: string; reason: string };

const sameHash = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export const refreshFamilyDecider: Decider<RefreshFamilyState, RefreshCommand, AuthEvent> = {
  initialState: () => ({
    exists: false,
    subject: '',
    tenant: '',
    scopes: [],
    currentHash: '',
    expiresAt: '',
    revoked: false,
  }),
  evolve: (state, event: StoredEvent<AuthEvent>) => {
    switch (event.type) {
      case 'RefreshTokenIssued': {
        const { subject, tenant, scopes, expiresAt, tokenHash } = event.data;
        return { subject, tenant, scopes, expiresAt, exists: true, currentHash: tokenHash, revoked: false };
      }
      case 'RefreshTokenRotated':
        return { ...state, currentHash: event.data.tokenHash, expiresAt: event.data.expiresAt };
      case 'RefreshTokenFamilyRevoked':
        return { ...state, revoked: true };
      default:
        return state;
    }
  },
  decide: (command, state, context) => {
    switch (command.kind) {
      case 'issue': {
        if (state.exists)
          throw new IllegalStateError(`Refresh token family ${command.familyId} already exists`);
        const { kind: _kind, ...data } = command;
        return [{ type: 'RefreshTokenIssued', schemaVersion: 1, data }];
      }
      case 'revoke':
        if (!state.exists) throw new NotFoundError(`No token family ${command.familyId}`);
        return state.revoked
          ? []
          : [{ type: 'RefreshTokenFamilyRevoked', schemaVersion: 1, data: { familyId: command.familyId, reason: command.reason } }];
      case 'rotate': {
        if (!state.exists || state.revoked) return [];
        if (!sameHash(command.presentedHash, state.currentHash)) {
          // A token that was already rotated is being replayed: whoever holds the family is suspect.
          return [
            {
              type: 'RefreshTokenFamilyRevoked',
              schemaVersion: 1,
              data: { familyId: command.familyId, reason: 'reuse of a rotated refresh token' },
            },
          ];
        }
        if (Date.parse(state.expiresAt) <= Date.parse(context.now)) return [];
        return [
          {
            type: 'RefreshTokenRotated',
            schemaVersion: 1,
            data: {
              familyId: command.familyId,
              previousHash: command.presentedHash,
              tokenHash: command.tokenHash,
              expiresAt: command.expiresAt,
            },
          },
        ];
      }
      default: {
        const never: never = command;
        return never;
      }
    }
  },
};

const newRefreshToken = (familyId: string) => `rt.${familyId}.${randomBytes(32).toString('base64url')}`;

const familyOf = (token: string): string => {
  const [prefix, familyId, secret] = token.split('.');
  if (prefix !== 'rt' || !familyId || !UUID_PATTERN.test(familyId) || !secret)
    throw new AuthenticationError('Malformed refresh token');
  return familyId;
};

const expiry = (now: string, ttlSeconds: number) =>
  new Date(Date.parse(now) + ttlSeconds * 1000).toISOString();

export interface RefreshGrant {
  familyId: string;
  refreshToken: string;
  subject: string;
  tenant: string;
  scopes: Scope[];
}

/** What tokens are issued for, and the credential of the caller issuing them (revoking it ends them). */
export interface TokenRequest {
  subject: string;
  tenant: string;
  scopes: Scope[];
  issuedWith?: Credential;
}

/** Starts a family with its first refresh token, recorded in the tenant it works in. */
export const issueRefreshToken = async (
  store: EventStore,
  input: TokenRequest & { ttlSeconds: number },
  context: CommandContext,
): Promise<RefreshGrant> => {
  const familyId = newId();
  const refreshToken = newRefreshToken(familyId);
  await handleCommand(
    store,
    streamId('refresh', familyId),
    refreshFamilyDecider,
    {
      kind: 'issue',
      familyId,
      tokenHash: hashSecret(refreshToken),
      subject: input.subject,
      tenant: input.tenant,
      scopes: input.scopes,
      expiresAt: expiry(context.now, input.ttlSeconds),
      ...(input.issuedWith && 'apiKey' in input.issuedWith ? { issuedWithKey: input.issuedWith.apiKey } : {}),
      ...(input.issuedWith && 'tokenFamily' in input.issuedWith ? { issuedWithFamily: input.issuedWith.tokenFamily } : {}),
    },
    { ...context, project: input.tenant },
  );
  return { familyId, refreshToken, subject: input.subject, tenant: input.tenant, scopes: input.scopes };
};

/**
 * Exchanges a refresh token for the next one of its family. Presenting a token that was already
 * exchanged revokes the family, so neither the thief nor the owner can continue with it.
 */
export const rotateRefreshToken = async (
  { store, readModels }: { store: EventStore; readModels: ReadModels },
  input: { refreshToken: string; ttlSeconds: number },
  context: CommandContext,
): Promise<RefreshGrant> => {
  const familyId = familyOf(input.refreshToken);
  // A family whose issuer was revoked ends here; the family itself is judged by its stream below,
  // which the read model may lag, so that its answer never depends on the lag.
  const revoked = await issuerRevokedBecause(readModels, familyId);
  if (revoked) throw new AuthenticationError(`Refresh token refused: ${revoked}`);
  const refreshToken = newRefreshToken(familyId);
  // A concurrent use of the same token loses the race, is re-decided, and counts as reuse.
  const result = await handleCommand(
    store,
    streamId('refresh', familyId),
    refreshFamilyDecider,
    {
      kind: 'rotate',
      familyId,
      presentedHash: hashSecret(input.refreshToken),
      tokenHash: hashSecret(refreshToken),
      expiresAt: expiry(context.now, input.ttlSeconds),
    },
    context,
    { retries: 1 },
  );
  const rotated = result.events.some((e) => e.type === 'RefreshTokenRotated');
  if (!rotated) {
    const state = result.state;
    if (!state.exists) throw new AuthenticationError('Unknown refresh token');
    throw new AuthenticationError(state.revoked ? 'Refresh token revoked' : 'Refresh token expired');
  }
  const { subject, tenant, scopes } = result.state;
  return { familyId, refreshToken, subject, tenant, scopes };
};

export interface TokenDeps {
  store: EventStore;
  readModels: ReadModels;
  signer: TokenSigner | null;
  accessTtlS: number;
  refreshTtlS: number;
}

export const TokenPairResponseSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_in: z.number().int(),
  token_type: z.literal('Bearer'),
});
type TokenPair = z.output<typeof TokenPairResponseSchema>;

const signerOf = (signer: TokenSigner | null): TokenSigner => {
  if (!signer?.canSign)
    throw new UnavailableError('This deployment verifies tokens but cannot sign them: set auth.jwt_secret (HS256)');
  return signer;
};

const pairOf = (signer: TokenSigner, grant: RefreshGrant, accessTtlS: number): TokenPair => ({
  access_token: signer.sign({ sub: grant.subject, scope: grant.scopes.join(' '), tenant_id: grant.tenant, fid: grant.familyId }),
  refresh_token: grant.refreshToken,
  expires_in: accessTtlS,
  token_type: 'Bearer',
});

/** A new access token and the first refresh token of a new family, and the family's id. */
export const issueTokenPair = async (
  deps: Omit<TokenDeps, 'readModels'>,
  input: TokenRequest,
  context: CommandContext,
): Promise<TokenPair & { family_id: string }> => {
  const signer = signerOf(deps.signer);
  const grant = await issueRefreshToken(deps.store, { ...input, ttlSeconds: deps.refreshTtlS }, context);
  return { ...pairOf(signer, grant, deps.accessTtlS), family_id: grant.familyId };
};

/** Ends a family: its access tokens, its refresh token and the tokens they issued are refused from then on. */
export const revokeTokenFamily = async (store: EventStore, input: { familyId: string; reason: string }, context: CommandContext) =>
  handleCommand(store, streamId('refresh', input.familyId), refreshFamilyDecider, { kind: 'revoke', ...input }, context);

export const refreshTokensSurfaces = {
  name: 'tokens.refresh',
  tool: false,
  toolset: 'admin',
  writes: true,
  // Only over its route, where the refresh token is the credential.
  scope: 'admin',
  input: z.object({ refresh_token: z.string().min(1).max(512) }).strict(),
  output: TokenPairResponseSchema,
  rest: {
    method: 'POST',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for new tokens',
    anonymous: true,
    rateClass: 'auth',
  },
} as const satisfies RouteSurfaces;

/** Rotates the refresh token and signs a fresh access token: the refresh token is the credential. */
export const refreshTokensOperation = (deps: TokenDeps) =>
  defineOperation({
    ...refreshTokensSurfaces,
    title: 'Refresh tokens',
    description: 'Exchanges a refresh token for a new access token and a new refresh token.',
    run: async ({ refresh_token: refreshToken }, { actor, correlationId }) => {
      const signer = signerOf(deps.signer);
      const grant = await rotateRefreshToken(
        deps,
        { refreshToken, ttlSeconds: deps.refreshTtlS },
        commandContext(actor, { correlationId }),
      );
      return pairOf(signer, grant, deps.accessTtlS);
    },
  });

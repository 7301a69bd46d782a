import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../errors.js';

/** The scopes of the REST API and the MCP tools that mirror it. */
export const SCOPES = [
  'search:read',
  'index:read',
  'index:write',
  'connectors:read',
  'connectors:write',
  'config:read',
  'config:write',
  /** Audit log, projection rebuilds, metrics and the admin console: a tenant's admin sees its own events. */
  'admin',
] as const;
export const ScopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof ScopeSchema>;

/** The scopes that allow a change; an operation that appends events needs one of them. */
export const WRITE_SCOPES: readonly Scope[] = ['index:write', 'connectors:write', 'config:write', 'admin'];

/** What a caller authenticated with: an API key, or an access token of a refresh token family. */
export type Credential = { apiKey: string } | { tokenFamily: string };

const SHA256 = z.string().regex(/^[a-f0-9]{64}$/, 'expected a sha256 hex digest');

/** An API key is stored only as the sha256 of its value. */
export const ApiKeyCreatedSchema = z.object({
  type: z.literal('ApiKeyCreated'),
  schemaVersion: z.literal(1),
  data: z.object({
    keyId: z.uuid(),
    hash: SHA256,
    scopes: z.array(ScopeSchema),
    tenant: z.string().min(1),
    label: z.string().nullable(),
  }),
});

export const ApiKeyRevokedSchema = z.object({
  type: z.literal('ApiKeyRevoked'),
  schemaVersion: z.literal(1),
  data: z.object({ keyId: z.uuid() }),
});

/** A refresh token family starts at login; each rotation replaces the one valid token. */
export const RefreshTokenIssuedSchema = z.object({
  type: z.literal('RefreshTokenIssued'),
  schemaVersion: z.literal(1),
  data: z.object({
    familyId: z.uuid(),
    tokenHash: SHA256,
    subject: z.string().min(1),
    tenant: z.string().min(1),
    scopes: z.array(ScopeSchema),
    expiresAt: z.iso.datetime({ offset: true }),
    /** The API key whose caller issued the family: revoking the key ends the family. */
    issuedWithKey: z.uuid().optional(),
    /** The family whose access token issued this one: revoking that family ends this one too. */
    issuedWithFamily: z.uuid().optional(),
  }),
});

export const RefreshTokenRotatedSchema = z.object({
  type: z.literal('RefreshTokenRotated'),
  schemaVersion: z.literal(1),
  data: z.object({
    familyId: z.uuid(),
    previousHash: SHA256,
    tokenHash: SHA256,
    expiresAt: z.iso.datetime({ offset: true }),
  }),
});

/** A used token came back (someone holds a copy), or an admin revoked it: the whole family stops working. */
export const RefreshTokenFamilyRevokedSchema = z.object({
  type: z.literal('RefreshTokenFamilyRevoked'),
  schemaVersion: z.literal(1),
  data: z.object({ familyId: z.uuid(), reason: z.string() }),
});

export const ConfigChangeSchema = z.object({ path: z.string().min(1), value: z.unknown() });

export const ConfigChangedSchema = z.object({
  type: z.literal('ConfigChanged'),
  schemaVersion: z.literal(1),
  data: z.object({ changes: z.array(ConfigChangeSchema).min(1), by: z.string().min(1) }),
});

export const AuthEventSchemas = [
  ApiKeyCreatedSchema,
  ApiKeyRevokedSchema,
  RefreshTokenIssuedSchema,
  RefreshTokenRotatedSchema,
  RefreshTokenFamilyRevokedSchema,
  ConfigChangedSchema,
] as const;
export type AuthEvent = z.infer<(typeof AuthEventSchemas)[number]>;

/** Missing, expired, forged or unknown credentials. */
export class AuthenticationError extends AppError {
  override name = 'AuthenticationError';
  constructor(message: string) {
    super('AUTHENTICATION_ERROR', message);
  }
}

/** Valid credentials without the scope an action needs. */
export class AuthorizationError extends AppError {
  override name = 'AuthorizationError';
  /** Without a scope: valid credentials that may not reach what the message names (another tenant's). */
  constructor(
    readonly scope?: string,
    message = `This action needs the '${scope}' scope`,
  ) {
    super('AUTHORIZATION_ERROR', message, scope ? { scope } : undefined);
  }
}

/** sha256 hex of a secret: what the ledger keeps of API keys and refresh tokens. */
export const hashSecret = (value: string): string => createHash('sha256').update(value).digest('hex');

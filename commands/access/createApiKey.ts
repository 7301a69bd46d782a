import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AuthorizationError, hashSecret, ScopeSchema, type AuthEvent, type Scope } from '../../src/domain/auth.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import { newId } from '../../src/domain/ids.js';
import type { Position } from '../../src/domain/position.js';
import { commandContext, handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { IllegalStateError } from '../../src/errors.js';
import { defineOperation, isOperator, type OperationContext, type OperationSurfaces } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import type { EventStore } from '../../src/ports/eventStore.js';

/** An API key: 32 hexadecimal characters (128 random bits). */
export const generateApiKey = (): string => randomBytes(16).toString('hex');

export interface ApiKeyState {
  exists: boolean;
  revoked: boolean;
}

export type ApiKeyCommand =
  | { kind: 'create'; keyId: string; hash: string; scopes: Scope[]; tenant: string; label: string | null }
  | { kind: 'revoke'; keyId: string };

export const apiKeyDecider: Decider<ApiKeyState, ApiKeyCommand, AuthEvent> = {
  initialState: () => ({ exists: false, revoked: false }),
  evolve: (state, event: StoredEvent<AuthEvent>) =>
    event.type === 'ApiKeyCreated'
      ? { exists: true, revoked: false }
      : event.type === 'ApiKeyRevoked'
        ? { ...state, revoked: true }
        : state,
  decide: (command, state) => {
    switch (command.kind) {
      case 'create': {
        if (state.exists) throw new IllegalStateError(`API key ${command.keyId} already exists`);
        const { kind: _kind, ...data } = command;
        return [{ type: 'ApiKeyCreated', schemaVersion: 1, data }];
      }
      case 'revoke':
        if (!state.exists) throw new IllegalStateError(`No API key ${command.keyId}`);
        return state.revoked
          ? []
          : [{ type: 'ApiKeyRevoked', schemaVersion: 1, data: { keyId: command.keyId } }];
      default: {
        const never: never = command;
        return never;
      }
    }
  },
};

export interface CreatedApiKey {
  keyId: string;
  /** Shown once: the ledger keeps only its hash. */
  key: string;
  scopes: Scope[];
  tenant: string;
}

export const createApiKey = async (
  store: EventStore,
  input: { scopes: Scope[]; tenant: string; label?: string | null },
  context: CommandContext,
): Promise<CreatedApiKey> => {
  const key = generateApiKey();
  const keyId = newId();
  await handleCommand(
    store,
    streamId('apikey', keyId),
    apiKeyDecider,
    {
      kind: 'create',
      keyId,
      hash: hashSecret(key),
      scopes: input.scopes,
      tenant: input.tenant,
      label: input.label ?? null,
    },
    // Recorded in the key's tenant: its audit, not the creator's, lists it.
    { ...context, project: input.tenant },
  );
  return { keyId, key, scopes: input.scopes, tenant: input.tenant };
};

export const CreateApiKeyInputSchema = z
  .object({
    scopes: z.array(ScopeSchema).min(1).describe('What the key may do'),
    tenant: z.string().min(1).max(200).describe('The tenant (project) the key works in'),
    label: z.string().max(500).nullable().optional().describe('A note saying what the key is for'),
  })
  .strict();

export const CreateApiKeyOutputSchema = z.object({
  key_id: z.string(),
  api_key: z.string().describe('Shown once: only its hash is kept'),
  scopes: z.array(ScopeSchema),
  tenant: z.string(),
});

/** A tenant's administrator manages its own tenant's credentials; the operator any tenant's. */
export const assertWithinTenant = (context: Pick<OperationContext, 'actor' | 'scopes'>, tenant: string) => {
  const { actor } = context;
  if (actor.tenant && actor.tenant !== tenant && !isOperator(context)) {
    throw new AuthorizationError(undefined, `Credentials of tenant '${actor.tenant}' cannot manage tenant '${tenant}'`);
  }
};

export const createApiKeySurfaces = {
  name: 'keys.create',
  cli: {
    command: ['keys', 'create'],
    description: 'create an API key; the key is printed once and only its hash is kept',
    options: [
      {
        flags: '--scopes <scopes>',
        field: 'scopes',
        description: `comma-separated scopes (${ScopeSchema.options.join(', ')})`,
        parse: 'scopes',
        required: true,
      },
      { flags: '--tenant <tenant>', field: 'tenant', description: 'the tenant (project) the key works in', default: DEFAULT_PROJECT },
      { flags: '--label <label>', field: 'label', description: 'a note saying what the key is for' },
    ],
    print: {
      above: '{api_key}\n\nThe key above is shown only this once; only its hash is kept.',
      fields: { 'key id': '{key_id}', scopes: '{scopes}', tenant: '{tenant}' },
    },
  },
} as const satisfies OperationSurfaces;

/** `keys.create`: the key works as soon as it is answered (the read model has it). */
/** What the credential commands need: the store, and a wait until authentication sees what they wrote. */
export interface CredentialCommandDeps {
  store: EventStore;
  waitForProjections: (position: Position) => Promise<void>;
}

export const createApiKeyOperation = (deps: CredentialCommandDeps) =>
  defineOperation({
    ...createApiKeySurfaces,
    title: 'Create an API key',
    description: 'Creates an API key with scopes for a tenant; the key is answered once and only its hash is kept.',
    toolset: 'admin',
    scope: 'admin',
    writes: true,
    input: CreateApiKeyInputSchema,
    output: CreateApiKeyOutputSchema,
    run: async (input, context) => {
      const { actor, correlationId, project } = context;
      assertWithinTenant(context, input.tenant);
      const created = await createApiKey(
        deps.store,
        { scopes: input.scopes, tenant: input.tenant, label: input.label ?? null },
        commandContext(actor, { correlationId, project }),
      );
      await deps.waitForProjections(await deps.store.headPosition());
      return { key_id: created.keyId, api_key: created.key, scopes: created.scopes, tenant: created.tenant };
    },
  });

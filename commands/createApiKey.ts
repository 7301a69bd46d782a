import { createHash, randomBytes } from 'node:crypto';
import type { AuthEvent, Scope } from '../src/domain/auth.js';
import { streamId, type StoredEvent } from '../src/domain/events.js';
import { newId } from '../src/domain/ids.js';
import { handleCommand, type CommandContext, type Decider } from '../src/engine/commands.js';
import { IllegalStateError } from '../src/errors.js';
import type { EventStore } from '../src/ports/eventStore.js';

/** sha256 hex of a secret: what the ledger keeps of API keys and refresh tokens. */
export const hashSecret = (value: string): string => createHash('sha256').update(value).digest('hex');

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
    context,
  );
  return { keyId, key, scopes: input.scopes, tenant: input.tenant };
};

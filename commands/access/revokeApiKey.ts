import { z } from 'zod';
import type { AuthEvent } from '../../src/domain/auth.js';
import { streamId } from '../../src/domain/events.js';
import { commandContext, handleCommand, type CommandContext } from '../../src/engine/commands.js';
import { IllegalStateError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { apiKeyDecider, assertWithinTenant, type CredentialCommandDeps } from './createApiKey.js';

/** Revokes an API key; revoking a revoked key changes nothing. */
export const revokeApiKey = async (
  store: EventStore,
  keyId: string,
  context: CommandContext,
): Promise<void> => {
  await handleCommand(store, streamId('apikey', keyId), apiKeyDecider, { kind: 'revoke', keyId }, context);
};

export const RevokeApiKeyInputSchema = z.object({ key_id: z.uuid().describe('The key id `keys.create` answered') }).strict();

export const revokeApiKeySurfaces = {
  name: 'keys.revoke',
  cli: {
    command: ['keys', 'revoke'],
    description: 'revoke an API key',
    arguments: [{ name: 'keyId', field: 'key_id', description: 'the key id printed by `ctx keys create`' }],
    print: { line: 'revoked {key_id}' },
  },
} as const satisfies OperationSurfaces;

/** `keys.revoke`: the key is refused from then on. */
export const revokeApiKeyOperation = ({ store, waitForProjections }: CredentialCommandDeps) =>
  defineOperation({
    ...revokeApiKeySurfaces,
    title: 'Revoke an API key',
    description: 'Revokes an API key: requests with it are refused from then on. Revoking it again changes nothing.',
    toolset: 'admin',
    scope: 'admin',
    writes: true,
    input: RevokeApiKeyInputSchema,
    output: z.object({ key_id: z.string(), revoked: z.literal(true) }),
    run: async (input, context) => {
      const { actor, correlationId } = context;
      const [created] = await store.readStream(streamId('apikey', input.key_id), { maxCount: 1 });
      if (!created) throw new IllegalStateError(`No API key ${input.key_id}`);
      const { tenant } = (created.data as Extract<AuthEvent, { type: 'ApiKeyCreated' }>['data']);
      assertWithinTenant(context, tenant);
      // Recorded in the key's tenant, as its creation was.
      await revokeApiKey(store, input.key_id, commandContext(actor, { correlationId, project: tenant }));
      // Requests with the key, and tokens its callers issued, are refused once the operation answers.
      await waitForProjections(await store.headPosition());
      return { key_id: input.key_id, revoked: true as const };
    },
  });

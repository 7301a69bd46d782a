import { streamId } from '../src/domain/events.js';
import { handleCommand, type CommandContext } from '../src/engine/commands.js';
import type { EventStore } from '../src/ports/eventStore.js';
import { apiKeyDecider } from './createApiKey.js';

/** Revokes an API key; revoking a revoked key changes nothing. */
export const revokeApiKey = async (
  store: EventStore,
  keyId: string,
  context: CommandContext,
): Promise<void> => {
  await handleCommand(store, streamId('apikey', keyId), apiKeyDecider, { kind: 'revoke', keyId }, context);
};

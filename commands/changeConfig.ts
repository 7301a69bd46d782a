import type { AuthEvent } from '../src/domain/auth.js';
import { streamId, type StoredEvent } from '../src/domain/events.js';
import { deterministicUuid } from '../src/domain/ids.js';
import { handleCommand, type CommandContext, type Decider } from '../src/engine/commands.js';
import type { EventStore } from '../src/ports/eventStore.js';

/** The deployment-wide runtime settings live in one stream. */
export const CONFIG_STREAM = streamId('config', deterministicUuid('runtime-settings'));

/** A tenant's own settings (its search defaults) live in a stream of its own. */
export const tenantConfigStream = (tenant: string) =>
  streamId('config', deterministicUuid(`runtime-settings:${tenant}`));

/** Dotted paths (`search.max_results`) to the value each change set last. */
export type ConfigOverrides = Record<string, unknown>;

export interface ChangeConfig {
  changes: { path: string; value: unknown }[];
  by: string;
}

export const configDecider: Decider<ConfigOverrides, ChangeConfig, AuthEvent> = {
  initialState: () => ({}),
  evolve: (state, event: StoredEvent<AuthEvent>) =>
    event.type === 'ConfigChanged'
      ? { ...state, ...Object.fromEntries(event.data.changes.map((c) => [c.path, c.value])) }
      : state,
  decide: (command, state) => {
    // Setting a value it already has records nothing.
    const changes = command.changes.filter((c) => JSON.stringify(state[c.path]) !== JSON.stringify(c.value));
    return changes.length
      ? [{ type: 'ConfigChanged', schemaVersion: 1, data: { changes, by: command.by } }]
      : [];
  },
};

export const changeConfig = async (
  store: EventStore,
  command: ChangeConfig,
  context: CommandContext,
  stream: string = CONFIG_STREAM,
) => handleCommand(store, stream, configDecider, command, context, { retries: 2 });

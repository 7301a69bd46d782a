import type { AuthEvent } from '../../src/domain/auth.js';
import {
  CONFIG_STREAM,
  ConfigPatchResponseSchema,
  ConfigPatchSchema,
  DEPLOYMENT_WIDE,
  evolveConfig,
  flattenSettings,
  SettingsSchema,
  tenantConfigStream,
  withOverrides,
  type ConfigOverrides,
} from '../../src/domain/runtimeSettings.js';
import { commandContext, handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { ValidationError } from '../../src/errors.js';
import { checkOperator, defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { RuntimeSettings } from '../../src/ports/runtimeSettings.js';
import { parseInput } from '../../src/validation.js';

export interface ChangeConfig {
  changes: { path: string; value: unknown }[];
  by: string;
}

export const configDecider: Decider<ConfigOverrides, ChangeConfig, AuthEvent> = {
  initialState: () => ({}),
  evolve: evolveConfig,
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

export const changeConfigSurfaces = {
  name: 'config.change',
  tool: false,
  toolset: 'admin',
  writes: true,
  scope: 'config:write',
  input: ConfigPatchSchema,
  output: ConfigPatchResponseSchema,
  rest: { method: 'PATCH', path: '/config', summary: 'Update configuration', rateClass: 'config' },
} as const satisfies RouteSurfaces;

const isDeploymentWide = (path: string) => DEPLOYMENT_WIDE.some((section) => path.startsWith(`${section}.`));

/**
 * Every change is an event (who, when, what) and takes effect at once, so none needs a restart.
 * Search settings are a tenant's own (over the deployment's); rate limits are deployment-wide and
 * only the operator changes them. `indexing` comes from ctx.toml and is shown, not changed.
 */
export const changeConfigOperation = (store: EventStore, settings: RuntimeSettings, rerankerConfigured: boolean) =>
  defineOperation({
    ...changeConfigSurfaces,
    title: 'Update configuration',
    description: "Changes the project's search settings, or the deployment's rate limits (the operator only).",
    run: async (patch, operation) => {
      if (patch.indexing) {
        throw new ValidationError(
          'indexing settings are read from ctx.toml at start ([projections] batch_size); change them there',
        );
      }
      if (patch.search?.enable_reranking === true && !rerankerConfigured)
        throw new ValidationError('search.enable_reranking: no reranker is configured ([reranker] provider in ctx.toml)');
      const changes = flattenSettings(patch);
      if (changes.length === 0) throw new ValidationError('Nothing to change');
      const wide = changes.filter((c) => isDeploymentWide(c.path));
      const own = changes.filter((c) => !isDeploymentWide(c.path));
      if (wide.length > 0) checkOperator(operation, `${wide[0]!.path} holds for every tenant: changing it`);
      const next = parseInput(
        SettingsSchema,
        withOverrides(await settings.read(operation.project), Object.fromEntries(changes.map((c) => [c.path, c.value]))),
      );
      if (next.search.default_top_k > next.search.max_results) {
        throw new ValidationError('search.default_top_k must not exceed search.max_results');
      }
      const context = commandContext(operation.actor, { project: operation.project, correlationId: operation.correlationId });
      const record = async (chosen: typeof changes, stream: string): Promise<string[]> => {
        if (chosen.length === 0) return [];
        const result = await changeConfig(store, { changes: chosen, by: operation.actor.subject }, context, stream);
        return result.events.flatMap((e) => (e.type === 'ConfigChanged' ? e.data.changes.map((c) => c.path) : []));
      };
      const recorded = [...(await record(wide, CONFIG_STREAM)), ...(await record(own, tenantConfigStream(operation.project)))];
      // The next request sees the change.
      await settings.read(operation.project);
      return { updated: recorded, requires_restart: false };
    },
  });

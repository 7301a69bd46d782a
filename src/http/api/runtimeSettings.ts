import {
  changeConfig,
  CONFIG_STREAM,
  configDecider,
  type ConfigOverrides,
} from '../../../commands/changeConfig.js';
import type { Config } from '../../config.js';
import { loadAggregateAsOf } from '../../engine/asOf.js';
import { commandContext } from '../../engine/commands.js';
import { ValidationError } from '../../errors.js';
import type { OperationContext } from '../../operations.js';
import type { EventStore } from '../../ports/eventStore.js';
import { parseInput } from '../../validation.js';
import { ConfigPatchSchema, SettingsSchema, type Settings } from './schemas.js';
import type { RateClass } from './routeSpecs.js';

/** Seed 002's numbers. */
const DEFAULT_RATE_LIMITS = {
  search_per_minute: 100,
  index_per_minute: 10,
  connectors_per_minute: 20,
  config_per_minute: 5,
};
const AUTH_PER_MINUTE = 10;
/** The admin console polls status and progress about once a second per open view. */
const ADMIN_PER_MINUTE = 600;
/** Reads through the operations route outside search (job status, annotation progress): a CLI following a job polls. */
const READ_PER_MINUTE = 600;

const flatten = (value: Record<string, unknown>, prefix = ''): { path: string; value: unknown }[] =>
  Object.entries(value).flatMap(([key, v]) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? flatten(v as Record<string, unknown>, `${prefix}${key}.`)
      : [{ path: `${prefix}${key}`, value: v }],
  );

const withOverrides = (base: Settings, overrides: ConfigOverrides): Settings => {
  const copy = structuredClone(base) as unknown as Record<string, Record<string, unknown>>;
  for (const [path, value] of Object.entries(overrides)) {
    const [section, key] = path.split('.') as [string, string];
    if (copy[section] && key in copy[section]) copy[section][key] = value;
  }
  return copy as unknown as Settings;
};

/**
 * Settings that `/config` reads and changes while the server runs. Every change is an event (who,
 * when, what); the changeable ones take effect at once, so none needs a restart. `indexing` comes
 * from ctx.toml and is shown, not changed.
 */
export const createRuntimeSettings = (config: Config, store: EventStore) => {
  const base: Settings = {
    search: { max_results: 100, default_top_k: 20, enable_reranking: false },
    indexing: { batch_size: config.projections.batchSize },
    rate_limits: DEFAULT_RATE_LIMITS,
  };
  let current = base;
  const reload = async () => {
    const { state } = await loadAggregateAsOf(store, CONFIG_STREAM, configDecider);
    current = withOverrides(base, state);
    return current;
  };
  return {
    reload,
    current: () => current,
    perMinute: (rateClass: RateClass): number =>
      rateClass === 'auth'
        ? AUTH_PER_MINUTE
        : rateClass === 'admin'
          ? ADMIN_PER_MINUTE
          : rateClass === 'read'
            ? READ_PER_MINUTE
            : current.rate_limits[`${rateClass}_per_minute`],
    patch: async (raw: unknown, operation: OperationContext) => {
      const patch = parseInput(ConfigPatchSchema, raw);
      if (patch.indexing) {
        throw new ValidationError(
          'indexing settings are read from ctx.toml at start ([projections] batch_size); change them there',
        );
      }
      if (patch.search?.enable_reranking === true)
        throw new ValidationError('search.enable_reranking: no reranker is available');
      const changes = flatten(patch);
      if (changes.length === 0) throw new ValidationError('Nothing to change');
      await reload();
      const next = parseInput(
        SettingsSchema,
        withOverrides(current, Object.fromEntries(changes.map((c) => [c.path, c.value]))),
      );
      if (next.search.default_top_k > next.search.max_results) {
        throw new ValidationError('search.default_top_k must not exceed search.max_results');
      }
      const result = await changeConfig(
        store,
        { changes, by: operation.actor.subject },
        commandContext(operation.actor, {
          project: operation.project,
          correlationId: operation.correlationId,
        }),
      );
      current = withOverrides(base, result.state);
      const recorded = result.events.flatMap((e) =>
        e.type === 'ConfigChanged' ? e.data.changes.map((c) => c.path) : [],
      );
      return { updated: recorded, requires_restart: false };
    },
  };
};
export type RuntimeSettings = ReturnType<typeof createRuntimeSettings>;

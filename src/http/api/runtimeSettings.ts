import {
  changeConfig,
  CONFIG_STREAM,
  configDecider,
  tenantConfigStream,
  type ConfigOverrides,
} from '../../../commands/changeConfig.js';
import type { Config } from '../../config.js';
import { AuthorizationError } from '../../domain/auth.js';
import { loadAggregateAsOf } from '../../engine/asOf.js';
import { commandContext } from '../../engine/commands.js';
import { ValidationError } from '../../errors.js';
import type { OperationContext } from '../../operations.js';
import type { EventStore } from '../../ports/eventStore.js';
import { parseInput } from '../../validation.js';
import { ConfigPatchSchema, SettingsSchema, type Settings } from './schemas.js';
import { DEFAULT_CLASS_LIMITS, endpointLimit } from './endpointRateLimits.js';
import type { RateClass } from './routeSpecs.js';

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

/** Settings only the deployment's administrators change: they hold for every tenant. */
const DEPLOYMENT_WIDE = ['rate_limits'] as const;

/**
 * Settings that `/config` reads and changes while the server runs. Every change is an event (who,
 * when, what); the changeable ones take effect at once, so none needs a restart. Search settings
 * are a tenant's own (over the deployment's); rate limits are deployment-wide and need the admin
 * scope. `indexing` comes from ctx.toml and is shown, not changed.
 */
export const createRuntimeSettings = (config: Config, store: EventStore) => {
  const base: Settings = {
    search: { max_results: 100, default_top_k: 20, enable_reranking: false },
    indexing: { batch_size: config.projections.batchSize },
    rate_limits: { ...DEFAULT_CLASS_LIMITS },
  };
  let current = base;
  const overridesOf = async (stream: string) => (await loadAggregateAsOf(store, stream, configDecider)).state;
  const reload = async () => {
    current = withOverrides(base, await overridesOf(CONFIG_STREAM));
    return current;
  };
  // A tenant's own settings change only through `patch`, so they are read once and kept.
  const tenants = new Map<string, ConfigOverrides>();
  /** What a tenant sees: the deployment's settings under its own. */
  const forTenant = async (tenant: string) => {
    let own = tenants.get(tenant);
    if (!own) tenants.set(tenant, (own = await overridesOf(tenantConfigStream(tenant))));
    return withOverrides(current, own);
  };
  /** `GET /config`: the deployment's settings as recorded now, under the tenant's. */
  const read = async (tenant: string) => {
    await reload();
    tenants.delete(tenant);
    return forTenant(tenant);
  };
  return {
    reload,
    forTenant,
    read,
    current: () => current,
    /** The limit of an endpoint (`METHOD /path`) seed 002 names, else of its class. */
    perMinute: (rateClass: RateClass, route?: string): number =>
      (route === undefined ? undefined : endpointLimit(route, current.rate_limits)) ??
      (rateClass === 'auth'
        ? AUTH_PER_MINUTE
        : rateClass === 'admin'
          ? ADMIN_PER_MINUTE
          : rateClass === 'read'
            ? READ_PER_MINUTE
            : current.rate_limits[`${rateClass}_per_minute`]),
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
      const isDeploymentWide = (path: string) => DEPLOYMENT_WIDE.some((section) => path.startsWith(`${section}.`));
      const wide = changes.filter((c) => isDeploymentWide(c.path));
      const own = changes.filter((c) => !isDeploymentWide(c.path));
      if (wide.length > 0 && operation.scopes && !operation.scopes.includes('admin')) {
        throw new AuthorizationError('admin', "rate_limits hold for every tenant: changing them needs the 'admin' scope");
      }
      const next = parseInput(
        SettingsSchema,
        withOverrides(await read(operation.project), Object.fromEntries(changes.map((c) => [c.path, c.value]))),
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
      await reload();
      tenants.delete(operation.project);
      return { updated: recorded, requires_restart: false };
    },
  };
};
export type RuntimeSettings = ReturnType<typeof createRuntimeSettings>;

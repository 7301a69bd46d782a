import { z } from 'zod';
import type { AuthEvent } from './auth.js';
import { streamId, type StoredEvent } from './events.js';
import { deterministicUuid } from './ids.js';

/** Settings that `/config` reads and changes while the server runs (the REST API). */
export const SettingsSchema = z.object({
  search: z.object({
    max_results: z.number().int().min(1).max(100),
    default_top_k: z.number().int().min(1).max(100),
    enable_reranking: z.boolean(),
  }),
  /** Read from ctx.toml at start; shown, not changed here. */
  indexing: z.object({ batch_size: z.number().int().min(1).max(10_000) }),
  rate_limits: z.object({
    search_per_minute: z.number().int().min(1).max(100_000),
    index_per_minute: z.number().int().min(1).max(100_000),
    connectors_per_minute: z.number().int().min(1).max(100_000),
    config_per_minute: z.number().int().min(1).max(100_000),
    write_per_minute: z.number().int().min(1).max(100_000),
  }),
});
export type Settings = z.infer<typeof SettingsSchema>;
export const ConfigPatchSchema = z
  .object({
    search: SettingsSchema.shape.search.partial().strict().optional(),
    indexing: SettingsSchema.shape.indexing.partial().strict().optional(),
    rate_limits: SettingsSchema.shape.rate_limits.partial().strict().optional(),
  })
  .strict();
export const ConfigPatchResponseSchema = z.object({
  updated: z.array(z.string()),
  requires_restart: z.boolean(),
});

/** The rate-limit classes whose budget a setting scales. */
export type SettableClass = 'search' | 'index' | 'connectors' | 'config' | 'write';

/** The settings' defaults: the REST API's limit of each class it names, and the write budget. */
export const DEFAULT_CLASS_LIMITS: Readonly<Record<`${SettableClass}_per_minute`, number>> = {
  search_per_minute: 100,
  index_per_minute: 10,
  connectors_per_minute: 20,
  config_per_minute: 5,
  /** Writes other than index control: an agent annotating a session chunk by chunk, a loader's ingest batches. */
  write_per_minute: 600,
};

/**
 * The settings before any change: `indexing`, the rate limits and whether a reranker is configured
 * (reranking is on where one is) come from ctx.toml.
 */
export const defaultSettings = (
  batchSize: number,
  rateLimits: Settings['rate_limits'] = DEFAULT_CLASS_LIMITS,
  rerankerConfigured = false,
): Settings => ({
  search: { max_results: 100, default_top_k: 20, enable_reranking: rerankerConfigured },
  indexing: { batch_size: batchSize },
  rate_limits: { ...rateLimits },
});

/** The deployment-wide runtime settings live in one stream. */
export const CONFIG_STREAM = streamId('config', deterministicUuid('runtime-settings'));

/** A tenant's own settings (its search defaults) live in a stream of its own. */
export const tenantConfigStream = (tenant: string) =>
  streamId('config', deterministicUuid(`runtime-settings:${tenant}`));

/** Dotted paths (`search.max_results`) to the value each change set last. */
export type ConfigOverrides = Record<string, unknown>;

export const evolveConfig = (state: ConfigOverrides, event: StoredEvent<AuthEvent>): ConfigOverrides =>
  event.type === 'ConfigChanged'
    ? { ...state, ...Object.fromEntries(event.data.changes.map((c) => [c.path, c.value])) }
    : state;

/** Settings only the deployment's administrators change: they hold for every tenant. */
export const DEPLOYMENT_WIDE = ['rate_limits'] as const;

export const flattenSettings = (value: Record<string, unknown>, prefix = ''): { path: string; value: unknown }[] =>
  Object.entries(value).flatMap(([key, v]) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? flattenSettings(v as Record<string, unknown>, `${prefix}${key}.`)
      : [{ path: `${prefix}${key}`, value: v }],
  );

export const withOverrides = (base: Settings, overrides: ConfigOverrides): Settings => {
  const copy = structuredClone(base) as unknown as Record<string, Record<string, unknown>>;
  for (const [path, value] of Object.entries(overrides)) {
    const [section, key] = path.split('.') as [string, string];
    if (copy[section] && key in copy[section]) copy[section][key] = value;
  }
  return copy as unknown as Settings;
};

import { DEFAULT_CLASS_LIMITS, type SettableClass } from '../../domain/runtimeSettings.js';
import type { RateClass } from '../../operations.js';

/**
 * The REST API's limits per tenant and minute, by route (`METHOD /path`). Each endpoint belongs to the
 * class whose `rate_limits.<class>_per_minute` setting scales it: with the settings at their
 * defaults (the first endpoint of each class), the limits are these.
 */
export const ENDPOINT_RATE_LIMITS: Readonly<Record<string, { rateClass: SettableClass; perMinute: number }>> = {
  'POST /search': { rateClass: 'search', perMinute: 100 },
  'GET /search/suggestions': { rateClass: 'search', perMinute: 50 },
  'POST /index/start': { rateClass: 'index', perMinute: 10 },
  'POST /index/stop': { rateClass: 'index', perMinute: 10 },
  'GET /status': { rateClass: 'index', perMinute: 10 },
  'GET /index/status': { rateClass: 'index', perMinute: 30 },
  'POST /index/force-reindex': { rateClass: 'index', perMinute: 5 },
  'GET /connectors': { rateClass: 'connectors', perMinute: 20 },
  'GET /connectors/{id}': { rateClass: 'connectors', perMinute: 20 },
  'POST /connectors': { rateClass: 'connectors', perMinute: 10 },
  'PUT /connectors/{id}': { rateClass: 'connectors', perMinute: 10 },
  'DELETE /connectors/{id}': { rateClass: 'connectors', perMinute: 5 },
  'GET /config': { rateClass: 'config', perMinute: 5 },
  'PATCH /config': { rateClass: 'config', perMinute: 2 },
};

/** An endpoint's limit under the class settings in force; undefined for a route the table does not name. */
export const endpointLimit = (
  route: string,
  settings: ClassLimits,
): number | undefined => {
  const entry = ENDPOINT_RATE_LIMITS[route];
  if (!entry) return undefined;
  const key = `${entry.rateClass}_per_minute` as const;
  return Math.max(1, Math.round((entry.perMinute * settings[key]) / DEFAULT_CLASS_LIMITS[key]));
};

/** Budgets no setting scales, per tenant and minute. */
const FIXED_PER_MINUTE: Readonly<Partial<Record<RateClass, number>>> = {
  auth: 10,
  /** The admin console polls status and progress about once a second per open view. */
  admin: 600,
  /** Reads through the operations route outside search (job status, annotation progress): a CLI following a job polls. */
  read: 600,
};

/** The class settings in force: `rate_limits` of the runtime settings. */
export type ClassLimits = Readonly<Record<`${SettableClass}_per_minute`, number>>;

/** A budget requests share: its name and its size per minute. */
export interface Budget {
  name: string;
  perMinute: number;
}

/**
 * The budget of a request in a rate class, on any surface: an endpoint (`METHOD /path`) the table
 * gives a limit other than its class's has one of its own; every other endpoint, and every
 * operation called by name, as a tool or over MCP, shares its class's.
 */
export const budgetUnder =
  (limits: () => ClassLimits) =>
  (rateClass: RateClass, route?: string): Budget => {
    const settings = limits();
    const entry = route === undefined ? undefined : ENDPOINT_RATE_LIMITS[route];
    if (entry && entry.perMinute !== DEFAULT_CLASS_LIMITS[`${entry.rateClass}_per_minute`])
      return { name: route!, perMinute: endpointLimit(route!, settings)! };
    const perMinute = FIXED_PER_MINUTE[rateClass] ?? settings[`${rateClass as SettableClass}_per_minute`];
    return { name: rateClass, perMinute };
  };

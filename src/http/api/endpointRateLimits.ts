import { DEFAULT_CLASS_LIMITS, type SettableClass, type Settings } from '../../domain/runtimeSettings.js';
import type { RateClass } from '../../operations.js';

/**
 * Seed 002's limits per user and minute, one budget per endpoint, keyed by route (`METHOD /path`).
 * Each endpoint belongs to the class whose `rate_limits.<class>_per_minute` setting scales it:
 * with the settings at their defaults (the first endpoint of each class), the limits are these.
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
  settings: Readonly<Record<`${SettableClass}_per_minute`, number>>,
): number | undefined => {
  const entry = ENDPOINT_RATE_LIMITS[route];
  if (!entry) return undefined;
  const key = `${entry.rateClass}_per_minute` as const;
  return Math.max(1, Math.round((entry.perMinute * settings[key]) / DEFAULT_CLASS_LIMITS[key]));
};

const AUTH_PER_MINUTE = 10;
/** The admin console polls status and progress about once a second per open view. */
const ADMIN_PER_MINUTE = 600;
/** Reads through the operations route outside search (job status, annotation progress): a CLI following a job polls. */
const READ_PER_MINUTE = 600;
/**
 * Batches of a bulk load: more than a client sending one batch after another's answer reaches
 * (a 500-document batch takes a few hundred milliseconds), so that such a client is never refused.
 */
export const BULK_PER_MINUTE = 600;

/** The limit of an endpoint (`METHOD /path`) seed 002 names, else of its class, under the settings in force. */
export const perMinuteUnder =
  (settings: () => Settings) =>
  (rateClass: RateClass, route?: string): number => {
    const limits = settings().rate_limits;
    return (
      (route === undefined ? undefined : endpointLimit(route, limits)) ??
      (rateClass === 'auth'
        ? AUTH_PER_MINUTE
        : rateClass === 'admin'
          ? ADMIN_PER_MINUTE
          : rateClass === 'read'
            ? READ_PER_MINUTE
            : rateClass === 'bulk'
              ? BULK_PER_MINUTE
              : limits[`${rateClass}_per_minute`])
    );
  };

import {
  CONFIG_STREAM,
  evolveConfig,
  tenantConfigStream,
  withOverrides,
  type ConfigOverrides,
  type Settings,
} from '../../src/domain/runtimeSettings.js';
import { loadAggregateAsOf } from '../../src/engine/asOf.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { RuntimeSettings } from '../../src/ports/runtimeSettings.js';

/** Runtime settings folded from their streams: the deployment's reloaded on demand, each tenant's kept once read. */
export const createEventSourcedSettings = (base: Settings, store: EventStore): RuntimeSettings => {
  let current = base;
  const overridesOf = async (stream: string): Promise<ConfigOverrides> =>
    (await loadAggregateAsOf(store, stream, { initialState: () => ({}), evolve: evolveConfig })).state;
  const reload = async () => {
    current = withOverrides(base, await overridesOf(CONFIG_STREAM));
    return current;
  };
  const tenants = new Map<string, ConfigOverrides>();
  const forTenant = async (tenant: string) => {
    let own = tenants.get(tenant);
    if (!own) tenants.set(tenant, (own = await overridesOf(tenantConfigStream(tenant))));
    return withOverrides(current, own);
  };
  return {
    current: () => current,
    reload,
    forTenant,
    read: async (tenant) => {
      await reload();
      tenants.delete(tenant);
      return forTenant(tenant);
    },
  };
};

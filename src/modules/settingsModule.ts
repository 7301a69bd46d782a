import { changeConfigOperation, changeConfigSurfaces } from '../../commands/settings/changeConfig.js';
import { createEventSourcedSettings } from '../../infra/settings/eventSourcedSettings.js';
import { readConfigOperation, readConfigSurfaces } from '../../queries/settings/readConfig.js';
import { defaultSettings } from '../domain/runtimeSettings.js';
import type { LedgerModule } from '../module.js';

/** Runtime settings (search defaults, rate limits), the deployment's and each tenant's, recorded as events. */
export const settingsModule: LedgerModule = {
  name: 'settings',
  setup: ({ config, store }) => {
    const rerankerConfigured = config.reranker.provider !== 'none';
    const settings = createEventSourcedSettings(
      defaultSettings(config.projections.batchSize, {
        search_per_minute: config.server.searchPerMinute,
        index_per_minute: config.server.indexPerMinute,
        connectors_per_minute: config.server.connectorsPerMinute,
        config_per_minute: config.server.configPerMinute,
        write_per_minute: config.server.writePerMinute,
      }, rerankerConfigured),
      store,
    );
    return Promise.resolve({
      operations: [readConfigOperation(settings), changeConfigOperation(store, settings, rerankerConfigured)],
      api: { settings },
      start: async () => {
        await settings.reload();
      },
    });
  },
  surfaces: [readConfigSurfaces, changeConfigSurfaces],
};

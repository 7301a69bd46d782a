import { createRemoteSources } from '../../infra/connectors/remoteSources.js';
import type { SyncConnectorDeps } from '../../commands/syncConnector.js';
import { CONNECTORS, type ConnectorRow } from '../../projections/connectors.js';
import type { Config } from '../config.js';
import { createSecretBox } from '../../infra/crypto/secretBox.js';
import type { ReadModels } from '../ports/projections.js';

/** What a connector sync needs from the rest of the product: its remote source (secrets opened) and lookup by id or name. */
export const connectorSyncWiring = (config: Config, readModels: ReadModels): Pick<SyncConnectorDeps, 'findConnector' | 'openSource'> => {
  const secrets = createSecretBox(config);
  const remoteSources = createRemoteSources();
  return {
    openSource: (kind, settings) => remoteSources(kind, secrets.open(settings)),
    findConnector: async (project, idOrName) => {
      const { items } = await readModels.find<ConnectorRow>(CONNECTORS, { where: { project }, limit: 1000 });
      return items.find((c) => c.id === idOrName) ?? items.find((c) => c.name === idOrName) ?? null;
    },
  };
};

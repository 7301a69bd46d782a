import { createRemoteSources } from '../../infra/connectors/remoteSources.js';
import type { SyncConnectorDeps } from '../../commands/jobs/syncConnector.js';
import { CONNECTORS, type ConnectorRow } from '../domain/connectorView.js';
import type { EndpointPolicy } from '../domain/connectorEndpoints.js';
import type { SecretBox } from '../ports/secretBox.js';
import type { ReadModels } from '../ports/projections.js';

/** What a connector sync needs from the rest of the product: its remote source (secrets opened, requests kept to `endpoints`) and lookup by id or name. */
export const connectorSyncWiring = (
  secrets: SecretBox,
  readModels: ReadModels,
  endpoints: EndpointPolicy,
): Pick<SyncConnectorDeps, 'findConnector' | 'openSource'> => {
  const remoteSources = createRemoteSources({ endpoints });
  return {
    openSource: (kind, settings) => remoteSources(kind, secrets.open(settings)),
    findConnector: async (project, idOrName) => {
      const { items } = await readModels.find<ConnectorRow>(CONNECTORS, { where: { project }, limit: 1000 });
      return items.find((c) => c.id === idOrName) ?? items.find((c) => c.name === idOrName) ?? null;
    },
  };
};

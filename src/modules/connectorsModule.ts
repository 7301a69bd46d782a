import {
  addConnectorOperation,
  addConnectorSurfaces,
  removeConnectorOperation,
  removeConnectorSurfaces,
  updateConnectorOperation,
  updateConnectorSurfaces,
  type ConnectorCommandDeps,
} from '../../commands/connectors/changeConnector.js';
import { manageConnectorsOperation } from '../../commands/connectors/manageConnectors.js';
import { connectorEndpointCheck } from '../../infra/connectors/endpointGuard.js';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { connectorsProjection } from '../../projections/connectors/connectors.js';
import {
  getConnectorOperation,
  getConnectorSurfaces,
  listConnectorsOperation,
  listConnectorsSurfaces,
} from '../../queries/connectors/listConnectors.js';
import { CONNECTORS } from '../domain/connectorView.js';
import { WRITE_SETTLE_MS } from '../engine/settling.js';
import { readableRootsOf } from '../ingestion/readableRoots.js';
import type { LedgerModule } from '../module.js';

/** Connectors: their configuration, kept as events, and the connectors read model; their syncs run as jobs. */
export const connectorsModule: LedgerModule = {
  name: 'connectors',
  setup: async (context) => {
    const { config, db, store, readModels, secrets } = context;
    const deps: ConnectorCommandDeps = {
      store,
      readModels,
      secrets,
      readable: readableRootsOf(config),
      checkEndpoint: connectorEndpointCheck(config.connectors),
      waitForProjections: (position) =>
        context.projections().waitFor(position, { name: CONNECTORS, timeoutMs: WRITE_SETTLE_MS }),
    };
    const connectors = {
      list: listConnectorsOperation(readModels),
      get: getConnectorOperation(readModels),
      add: addConnectorOperation(deps),
      update: updateConnectorOperation(deps),
      remove: removeConnectorOperation(deps),
    };
    return {
      projections: [await postgresDocumentProjection(db, connectorsProjection)],
      operations: [...Object.values(connectors), manageConnectorsOperation(connectors)],
    };
  },
  surfaces: [
    listConnectorsSurfaces,
    getConnectorSurfaces,
    addConnectorSurfaces,
    updateConnectorSurfaces,
    removeConnectorSurfaces,
  ],
};

import { changeConfigSurfaces } from '../../commands/settings/changeConfig.js';
import {
  addConnectorSurfaces,
  removeConnectorSurfaces,
  updateConnectorSurfaces,
} from '../../commands/connectors/changeConnector.js';
import { forceReindexSurfaces, startIndexingConnectorsSurfaces } from '../../commands/jobs/startIndexingConnectors.js';
import { stopIndexingSurfaces } from '../../commands/jobs/stopIndexing.js';
import { indexStatusSurfaces } from '../../queries/jobs/indexStatus.js';
import { refreshTokensSurfaces } from '../../commands/access/rotateRefreshToken.js';
import { getConnectorSurfaces, listConnectorsSurfaces } from '../../queries/connectors/listConnectors.js';
import { healthSurfaces } from '../../queries/health/health.js';
import { readConfigSurfaces } from '../../queries/settings/readConfig.js';
import { searchApiSurfaces } from '../../queries/search/searchApi.js';
import { searchSuggestionsSurfaces } from '../../queries/search/searchSuggestions.js';
import { systemStatusSurfaces } from '../../queries/health/systemStatus.js';
import { listAllJobsSurfaces } from '../../queries/jobs/listAllJobs.js';
import { projectionStatusSurfaces } from '../../queries/ledger/projectionStatus.js';
import { forgetSurfaces } from '../../commands/protection/forget.js';
import { auditRouteSurfaces } from '../../queries/ledger/auditEvents.js';
import { streamAsOfSurfaces } from '../../queries/ledger/streamAsOf.js';
import { startRebuildSurfaces } from '../../commands/ledger/rebuildProjection.js';
import type { RouteSurfaces } from '../operations.js';

/**
 * Every route of `/api/v1` an operation declares, whichever feature's module mounts it: the route
 * table and the OpenAPI document list them in this order.
 */
export const ROUTE_SURFACES: readonly RouteSurfaces[] = [
  forgetSurfaces,
  auditRouteSurfaces,
  streamAsOfSurfaces,
  healthSurfaces,
  systemStatusSurfaces,
  searchApiSurfaces,
  searchSuggestionsSurfaces,
  listConnectorsSurfaces,
  getConnectorSurfaces,
  addConnectorSurfaces,
  updateConnectorSurfaces,
  removeConnectorSurfaces,
  readConfigSurfaces,
  changeConfigSurfaces,
  startIndexingConnectorsSurfaces,
  stopIndexingSurfaces,
  indexStatusSurfaces,
  forceReindexSurfaces,
  refreshTokensSurfaces,
  startRebuildSurfaces,
  listAllJobsSurfaces,
  projectionStatusSurfaces,
];

import { changeConfigSurfaces } from '../../commands/changeConfig.js';
import {
  addConnectorSurfaces,
  removeConnectorSurfaces,
  updateConnectorSurfaces,
} from '../../commands/changeConnector.js';
import { forceReindexSurfaces, startIndexingConnectorsSurfaces } from '../../commands/startIndexingConnectors.js';
import { stopIndexingSurfaces } from '../../commands/stopIndexing.js';
import { indexStatusSurfaces } from '../../queries/indexStatus.js';
import { refreshTokensSurfaces } from '../../commands/rotateRefreshToken.js';
import { getConnectorSurfaces, listConnectorsSurfaces } from '../../queries/listConnectors.js';
import { healthSurfaces } from '../../queries/health.js';
import { readConfigSurfaces } from '../../queries/readConfig.js';
import { searchApiSurfaces } from '../../queries/searchApi.js';
import { searchSuggestionsSurfaces } from '../../queries/searchSuggestions.js';
import { systemStatusSurfaces } from '../../queries/systemStatus.js';
import { listAllJobsSurfaces } from '../../queries/listAllJobs.js';
import { projectionStatusSurfaces } from '../../queries/projectionStatus.js';
import { forgetSurfaces } from '../../commands/forget.js';
import { auditRouteSurfaces } from '../../queries/auditEvents.js';
import { streamAsOfSurfaces } from '../../queries/streamAsOf.js';
import { startRebuildSurfaces } from '../../commands/rebuildProjection.js';
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

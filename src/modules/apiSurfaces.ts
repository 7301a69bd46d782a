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
import { createApiKeySurfaces } from '../../commands/createApiKey.js';
import { issueTokensSurfaces } from '../../commands/issueTokens.js';
import { revokeApiKeySurfaces } from '../../commands/revokeApiKey.js';
import { revokeTokensSurfaces } from '../../commands/revokeTokens.js';
import { listApiKeysSurfaces } from '../../queries/listApiKeys.js';
import { listAllJobsSurfaces } from '../../queries/listAllJobs.js';
import { projectionStatusSurfaces } from '../../queries/projectionStatus.js';
import { forgetSurfaces } from '../../commands/forget.js';
import { auditRouteSurfaces } from '../../queries/auditEvents.js';
import { streamAsOfSurfaces } from '../../queries/streamAsOf.js';
import { startRebuildSurfaces } from '../../commands/rebuildProjection.js';
import type { OperationSurfaces, RouteSurfaces } from '../operations.js';

/** The routes of `/api/v1` the API module's operations declare: its route table and OpenAPI document list them. */
export const API_ROUTE_SURFACES: readonly RouteSurfaces[] = [
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
];

/** Every route of `/api/v1` an operation declares, the ledger module's included. */
export const ROUTE_SURFACES: readonly RouteSurfaces[] = [
  forgetSurfaces,
  auditRouteSurfaces,
  streamAsOfSurfaces,
  ...API_ROUTE_SURFACES,
  projectionStatusSurfaces,
];

/** Every surface the API module's operations declare: its routes, and the `ctx keys` and `ctx tokens` verbs. */
export const API_SURFACES: readonly OperationSurfaces[] = [
  ...API_ROUTE_SURFACES,
  createApiKeySurfaces,
  revokeApiKeySurfaces,
  listApiKeysSurfaces,
  issueTokensSurfaces,
  revokeTokensSurfaces,
];

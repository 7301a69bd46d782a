import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import {
  addConnectorOperation,
  removeConnectorOperation,
  updateConnectorOperation,
  type ConnectorCommandDeps,
} from '../../commands/changeConnector.js';
import { createApiKeyOperation } from '../../commands/createApiKey.js';
import { connectorEndpointCheck } from '../../infra/connectors/endpointGuard.js';
import { changeConfigOperation } from '../../commands/changeConfig.js';
import { controlIndexOperation } from '../../commands/controlIndex.js';
import { manageConnectorsOperation } from '../../commands/manageConnectors.js';
import { forceReindexOperation, startIndexingConnectorsOperation } from '../../commands/startIndexingConnectors.js';
import { stopIndexingOperation } from '../../commands/stopIndexing.js';
import { startRebuildOperation } from '../../commands/rebuildProjection.js';
import { listAllJobsOperation } from '../../queries/listAllJobs.js';
import { healthOperation } from '../../queries/health.js';
import { indexStatusOperation } from '../../queries/indexStatus.js';
import { systemStatusOperation } from '../../queries/systemStatus.js';
import { indexJobsFromOperations } from './indexJobsFromOperations.js';
import { createEventSourcedSettings } from '../../infra/settings/eventSourcedSettings.js';
import { readConfigOperation } from '../../queries/readConfig.js';
import { defaultSettings } from '../domain/runtimeSettings.js';
import { issueTokensOperation } from '../../commands/issueTokens.js';
import { issueTokenPair, refreshTokensOperation, type TokenDeps } from '../../commands/rotateRefreshToken.js';
import { revokeApiKeyOperation } from '../../commands/revokeApiKey.js';
import { apiKeysProjection } from '../../projections/apiKeys.js';
import { API_KEYS } from '../domain/apiKeyView.js';
import { TOKEN_FAMILIES } from '../domain/tokenFamilyView.js';
import { tokenFamiliesProjection } from '../../projections/tokenFamilies.js';
import { revokeTokensOperation } from '../../commands/revokeTokens.js';
import { listApiKeysOperation } from '../../queries/listApiKeys.js';
import { connectorsProjection } from '../../projections/connectors.js';
import { CONNECTORS } from '../domain/connectorView.js';
import { WRITE_SETTLE_MS } from '../engine/settling.js';
import { connectorSyncWiring } from './connectorSync.js';
import {
  getConnectorOperation,
  listConnectorsOperation,
} from '../../queries/listConnectors.js';
import type { SearchInput } from '../../queries/searchDocuments.js';
import { contextOperations } from '../../queries/contextSearch.js';
import { searchApiOperation } from '../../queries/searchApi.js';
import { searchSuggestionsOperation } from '../../queries/searchSuggestions.js';
import { createPinnedRankings } from '../../infra/postgres/pinnedRankings.js';
import type { WorkContextSearchDeps } from '../../queries/searchWithWorkContext.js';
import { UnavailableError } from '../errors.js';
import { mountErrorDocs } from '../http/api/errorDocs.js';
import { createApiMetrics } from '../http/api/apiMetrics.js';
import { actorOf, apiPlugin, restContext, type ApiHandlers } from '../http/api/apiPlugin.js';
import { authEnabled, createAuthenticator } from '../http/api/authenticator.js';
import { registerFileResources } from '../http/api/fileResources.js';
import { guardOtherSurfaces } from '../http/api/guardOtherSurfaces.js';
import { projectionProblems } from '../http/api/healthProblems.js';
import { createJwtCodec } from '../http/api/jwtCodec.js';
import { buildOpenApiDocument } from '../http/api/openApiDocument.js';
import { authenticateMcpWith } from '../http/mcpRoutes.js';
import { limitClassesWith, rateLimitsOf } from '../http/rateLimits.js';
import { readableRootsOf } from '../ingestion/readableRoots.js';
import { deploymentAccess } from '../mcp/server.js';
import { API_SURFACES } from './apiSurfaces.js';
import type { LedgerModule, ModuleContext } from '../module.js';
import { callOperation, isTool, operationNamed, rateClassOf, requiredScope, type OperationContext } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import { parseInput } from '../validation.js';
import { PRODUCT_VERSION } from '../http/api/version.js';

/**
 * How long a project's count of sources is reused by searches. Counting reads every document of the
 * project, on the connection that indexing writes through; the count changes only when a new
 * source is ingested.
 */
const SOURCE_COUNT_TTL_MS = 5_000;

/** `read`, answered from its last result for the same key while that is younger than `ttlMs`. */
const recentFor = <T>(ttlMs: number, read: (key: string) => Promise<T>) => {
  const recent = new Map<string, { at: number; value: Promise<T> }>();
  return (key: string): Promise<T> => {
    const now = Date.now();
    const hit = recent.get(key);
    if (hit && now - hit.at < ttlMs) return hit.value;
    for (const [old, { at }] of recent) if (now - at >= ttlMs) recent.delete(old);
    const value = read(key);
    recent.set(key, { at: now, value });
    value.catch(() => recent.delete(key));
    return value;
  };
};

const wire = async (context: ModuleContext) => {
  const { config, logger, db, store, readModels, content, keyring, secrets } = context;
  const jwt = await createJwtCodec(config.auth);
  const authenticator = createAuthenticator({ enabled: authEnabled(config), jwt, readModels });
  const settings = createEventSourcedSettings(
    defaultSettings(config.projections.batchSize, {
      search_per_minute: config.server.searchPerMinute,
      index_per_minute: config.server.indexPerMinute,
      connectors_per_minute: config.server.connectorsPerMinute,
      config_per_minute: config.server.configPerMinute,
      write_per_minute: config.server.writePerMinute,
    }),
    store,
  );
  const metrics = createApiMetrics();
  const tokens: TokenDeps = { store, readModels, signer: jwt, accessTtlS: config.auth.accessTtlS, refreshTtlS: config.auth.refreshTtlS };
  const readable = readableRootsOf(config);
  // Only the credentials' read models: a backlog of embeddings must not hold up a new key or a revocation.
  const settleCredentials = async (position: Parameters<ModuleContext['waitForProjections']>[0]) => {
    for (const name of [API_KEYS, TOKEN_FAMILIES]) await context.projections().waitFor(position, { name, timeoutMs: 30_000 });
  };
  const settle = async (position: Parameters<ModuleContext['waitForProjections']>[0]) =>
    context.projections().waitFor(position, { name: CONNECTORS, timeoutMs: WRITE_SETTLE_MS });

  /** A tool named by the caller of the operations route. */
  const tool = (name: string) => {
    const found = operationNamed(context.operations(), name);
    if (!found || !isTool(found)) throw new UnavailableError(`The '${name}' operation is not available in this deployment`);
    return found;
  };
  const search = (input: SearchInput, operationContext: OperationContext) => {
    const rank = context.features().search?.rank;
    if (!rank) throw new UnavailableError(`The 'search' operation is not available in this deployment`);
    return rank.run(parseInput(rank.input, input), operationContext);
  };
  const searchDeps: WorkContextSearchDeps = {
    search,
    sourcesSearched: recentFor(SOURCE_COUNT_TTL_MS, async (project) => (await readModels.count('documents', 'source', { project })).size),
    limits: async (project) => {
      const { search } = await settings.forTenant(project);
      return { defaultTopK: search.default_top_k, maxResults: search.max_results };
    },
    rankings: await createPinnedRankings(db),
  };
  const indexJobs = indexJobsFromOperations(context.features);
  const { openSource } = connectorSyncWiring(secrets, readModels, config.connectors);
  const indexing = {
    readModels,
    readable,
    jobs: indexJobs,
    checkRemote: (type: string, settings: Record<string, unknown>) => void openSource(type, settings),
  };
  const index = {
    start: startIndexingConnectorsOperation(indexing),
    forceReindex: forceReindexOperation(indexing),
    stop: stopIndexingOperation(indexJobs),
    status: indexStatusOperation(indexJobs),
  };
  const connectorDeps: ConnectorCommandDeps = {
    store,
    readModels,
    secrets,
    readable,
    checkEndpoint: connectorEndpointCheck(config.connectors),
    waitForProjections: settle,
  };
  const connectors = {
    list: listConnectorsOperation(readModels),
    get: getConnectorOperation(readModels),
    add: addConnectorOperation(connectorDeps),
    update: updateConnectorOperation(connectorDeps),
    remove: removeConnectorOperation(connectorDeps),
  };
  const jobsOrNone = async (operationContext: OperationContext) => {
    try {
      return await indexJobs.list(operationContext);
    } catch (error) {
      if (error instanceof UnavailableError) return [];
      throw error;
    }
  };

  const handlers: ApiHandlers = {
    // The name was checked, with the caller's scope, when the request was authenticated.
    // It runs in the caller's tenant as the operation's own route would.
    'POST /operations/{name}': ({ params, body, principal, context: call }) => {
      const named = tool(params.name as string);
      return callOperation(named, body, restContext(principal, call.correlationId, named.rest?.withinTenant));
    },
  };

  return {
    content,
    authenticator,
    settings,
    jwt,
    routes: async (app: Parameters<NonNullable<Awaited<ReturnType<LedgerModule['setup']>>['routes']>>[0]) => {
      const openapi = buildOpenApiDocument(PRODUCT_VERSION, context.operations());
      limitClassesWith(app, () => settings.current().rate_limits);
      const limits = rateLimitsOf(app);
      await app.register(apiPlugin, {
        prefix: '/api/v1',
        authenticator,
        handlers,
        metrics,
        limits,
        openapi: () => openapi,
        operations: context.operations(),
        bodyLimitBytes: Math.min(config.server.bodyLimitBytes, 1024 * 1024),
        operationNeeds: (name) => {
          const found = operationNamed(context.operations(), name);
          return found && isTool(found) ? { scope: requiredScope(found), rateClass: rateClassOf(found) } : null;
        },
      });
      mountErrorDocs(app);
      guardOtherSurfaces(app, authenticator, context.operations);
      authenticateMcpWith(app, async (request) => {
        const principal = await authenticator.authenticate(request.headers);
        const actor = actorOf(principal, 'mcp');
        return {
          actor,
          access: {
            ...deploymentAccess(config.mcp, principal.method === 'open' ? null : principal.scopes),
            ...(principal.credential ? { credential: principal.credential } : {}),
            limit: (operation) => limits.takeOperation(actor.tenant, operation),
          },
        };
      });
      if (authenticator.enabled)
        logger.info(
          { jwt: jwt ? config.auth.algorithm : 'none' },
          'Authentication is on for /api/v1 and /mcp',
        );
      else
        logger.warn(
          'Authentication is off: local processes may call every route anonymously (the server listens on loopback only, and refuses other hosts and web pages of other origins)',
        );
    },
    operations: [
      ...contextOperations({
        search: searchDeps,
        related: { readModels, content, store, keyring, search, jobs: jobsOrNone },
      }),
      healthOperation({
        version: PRODUCT_VERSION,
        databaseAnswers: () => db.query('SELECT 1').then(() => true, () => false),
        problems: () => projectionProblems(context.projections()),
        searchAvailable: () => context.features().search !== undefined,
      }),
      systemStatusOperation({
        readModels,
        indexStatus: (call) => index.status.run({}, call),
        performance: () => metrics.snapshot(),
      }),
      searchApiOperation(searchDeps),
      searchSuggestionsOperation(readModels),
      ...Object.values(index),
      controlIndexOperation(index),
      ...Object.values(connectors),
      manageConnectorsOperation(connectors),
      readConfigOperation(settings),
      changeConfigOperation(store, settings),
      createApiKeyOperation({ store, waitForProjections: settleCredentials }),
      revokeApiKeyOperation({ store, waitForProjections: settleCredentials }),
      listApiKeysOperation(readModels),
      issueTokensOperation(async (input, command) => {
        const issued = await issueTokenPair(tokens, input, command);
        // Its access token works as soon as it is answered: authentication finds the family.
        await settleCredentials(await store.headPosition());
        return issued;
      }),
      revokeTokensOperation({ store, waitForProjections: settleCredentials }),
      refreshTokensOperation(tokens),
      startRebuildOperation(context.projections),
      listAllJobsOperation({
        readModels,
        store,
        available: () => context.features().jobs !== undefined,
      }),
    ],
  };
};

/** The REST API: the REST API v1 with auth, scopes, tenants and rate limits, and the context.* MCP tools and resources. */
export const apiModule: LedgerModule = {
  name: 'api',
  setup: async (context) => {
    const { db } = context;
    const api = await wire(context);
    return {
      projections: [
        await postgresDocumentProjection(db, apiKeysProjection),
        await postgresDocumentProjection(db, tokenFamiliesProjection),
        await postgresDocumentProjection(db, connectorsProjection),
      ],
      operations: api.operations,
      routes: api.routes,
      mcp: (server, actor) =>
        registerFileResources(server, actor.tenant ?? DEFAULT_PROJECT, {
          readModels: context.readModels,
          content: api.content,
        }),
      start: async () => {
        await api.settings.reload();
      },
    };
  },
  surfaces: API_SURFACES,
  commandGroups: { keys: 'API keys for /api/v1 and MCP over HTTP' },
};

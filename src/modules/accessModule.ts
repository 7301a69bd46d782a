import { createApiKeyOperation, createApiKeySurfaces } from '../../commands/access/createApiKey.js';
import { issueTokensOperation, issueTokensSurfaces } from '../../commands/access/issueTokens.js';
import { revokeApiKeyOperation, revokeApiKeySurfaces } from '../../commands/access/revokeApiKey.js';
import { revokeTokensOperation, revokeTokensSurfaces } from '../../commands/access/revokeTokens.js';
import {
  issueTokenPair,
  refreshTokensOperation,
  refreshTokensSurfaces,
  type TokenDeps,
} from '../../commands/access/rotateRefreshToken.js';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { apiKeysProjection } from '../../projections/access/apiKeys.js';
import { tokenFamiliesProjection } from '../../projections/access/tokenFamilies.js';
import { listApiKeysOperation, listApiKeysSurfaces } from '../../queries/access/listApiKeys.js';
import { API_KEYS } from '../domain/apiKeyView.js';
import type { Position } from '../domain/position.js';
import { TOKEN_FAMILIES } from '../domain/tokenFamilyView.js';
import { UnavailableError } from '../errors.js';
import { createApiMetrics } from '../http/api/apiMetrics.js';
import { actorOf, apiPlugin, restContext, type ApiHandlers } from '../http/api/apiPlugin.js';
import { authEnabled, createAuthenticator } from '../http/api/authenticator.js';
import { mountErrorDocs } from '../http/api/errorDocs.js';
import { guardOtherSurfaces } from '../http/api/guardOtherSurfaces.js';
import { createJwtCodec } from '../http/api/jwtCodec.js';
import { buildOpenApiDocument } from '../http/api/openApiDocument.js';
import { PRODUCT_VERSION } from '../http/api/version.js';
import { authenticateMcpWith } from '../http/mcpCallers.js';
import { limitClassesWith, rateLimitsOf } from '../http/rateLimits.js';
import { deploymentAccess } from '../mcp/access.js';
import type { LedgerModule } from '../module.js';
import { callOperation, isTool, operationNamed, rateClassOf, requiredScope } from '../operations.js';

/**
 * Access: API keys and tokens, and what they guard — `/api/v1` (authentication, scopes, tenants,
 * rate limits, its OpenAPI document) and MCP over HTTP.
 */
export const accessModule: LedgerModule = {
  name: 'access',
  setup: async (context) => {
    const { config, logger, db, store, readModels } = context;
    const jwt = await createJwtCodec(config.auth);
    const authenticator = createAuthenticator({ enabled: authEnabled(config), jwt, readModels });
    const metrics = createApiMetrics();
    const tokens: TokenDeps = {
      store,
      readModels,
      signer: jwt,
      accessTtlS: config.auth.accessTtlS,
      refreshTtlS: config.auth.refreshTtlS,
    };
    // Only the credentials' read models: a backlog of embeddings must not hold up a new key or a revocation.
    const settleCredentials = async (position: Position) => {
      for (const name of [API_KEYS, TOKEN_FAMILIES])
        await context.projections().waitFor(position, { name, timeoutMs: 30_000 });
    };
    const credentials = { store, waitForProjections: settleCredentials };

    /** The operation `POST /operations/{name}` names: any tool of the catalogue, by the caller's choice. */
    const tool = (name: string) => {
      const found = operationNamed(context.operations(), name);
      if (!found || !isTool(found))
        throw new UnavailableError(`The '${name}' operation is not available in this deployment`);
      return found;
    };
    const handlers: ApiHandlers = {
      // The name was checked, with the caller's scope, when the request was authenticated.
      // It runs for the caller as the operation's own route would.
      'POST /operations/{name}': ({ params, body, principal, context: call }) =>
        callOperation(tool(params.name as string), body, restContext(principal, call.correlationId)),
    };

    return {
      projections: [
        await postgresDocumentProjection(db, apiKeysProjection),
        await postgresDocumentProjection(db, tokenFamiliesProjection),
      ],
      operations: [
        createApiKeyOperation(credentials),
        revokeApiKeyOperation(credentials),
        listApiKeysOperation(readModels),
        issueTokensOperation(async (input, command) => {
          const issued = await issueTokenPair(tokens, input, command);
          // Its access token works as soon as it is answered: authentication finds the family.
          await settleCredentials(await store.headPosition());
          return issued;
        }),
        revokeTokensOperation(credentials),
        refreshTokensOperation(tokens),
      ],
      api: { access: { performance: () => metrics.snapshot() } },
      routes: async (app) => {
        // Rate limits are runtime settings: changed through the API, they apply at once.
        const settings = context.features().settings;
        if (!settings) throw new Error('The REST API needs the settings feature: its rate limits are settings');
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
              ...(principal.method === 'open' ? { unauthenticated: true as const } : {}),
              limit: (operation) => limits.takeOperation(actor.tenant, operation),
            },
          };
        });
        if (authenticator.enabled)
          logger.info({ jwt: jwt ? config.auth.algorithm : 'none' }, 'Authentication is on for /api/v1 and /mcp');
        else
          logger.warn(
            'Authentication is off: local processes may call every route anonymously (the server listens on loopback only, and refuses other hosts and web pages of other origins)',
          );
      },
    };
  },
  surfaces: [
    refreshTokensSurfaces,
    createApiKeySurfaces,
    revokeApiKeySurfaces,
    listApiKeysSurfaces,
    issueTokensSurfaces,
    revokeTokensSurfaces,
  ],
  commandGroups: { keys: 'API keys for /api/v1 and MCP over HTTP' },
};

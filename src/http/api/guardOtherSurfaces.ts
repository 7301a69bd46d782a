import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/metadata.js';
import { AppError } from '../../errors.js';
import { isOperator, OPERATOR_NEEDED, operationNamed, requiredScope, type Operation, type OperationContext } from '../../operations.js';
import { DEFAULT_PROJECT } from '../../domain/workspace.js';
import { SERVER_PROOF_PATH } from '../serverProof.js';
import { refuse } from '../surfaceErrors.js';
import type { Authenticator, Principal } from './authenticator.js';

/** Routes anyone may call when authentication is on (HEAD goes with GET); every other route needs credentials. */
const PUBLIC_ROUTES = new Set([
  'GET /health',
  `POST ${SERVER_PROOF_PATH}`,
  'GET /docs/errors',
  'GET /admin',
  'GET /admin/',
  'GET /admin/console.js',
  'GET /admin/console.css',
]);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route authenticates its callers itself, in its own surface's format. */
    selfAuthenticating?: boolean;
  }
}

/**
 * Route config of MCP (answering in JSON-RPC) and of `/api/v1`'s own endpoints, whose route specs
 * say which are public (health, openapi.json, token refresh).
 */
export const SELF_AUTHENTICATING = { selfAuthenticating: true } as const;

const SEARCH_ROUTES = new Set(['/tools/search', '/tools/get', '/tools/sources', '/tools/list', '/agents/list']);

/** A tool that is an operation needs the operation's scope, as over MCP; other routes a scope by route. */
const scopeFor = (request: FastifyRequest, route: string, operations: () => readonly Operation[]): string => {
  if (route === '/metrics') return 'admin';
  if (route.startsWith('/tools/')) {
    const name = route === '/tools/:name' ? (request.params as { name?: string }).name : route.slice('/tools/'.length);
    const operation = name === undefined ? undefined : operationNamed(operations(), name);
    if (operation) return requiredScope(operation);
  }
  if (SEARCH_ROUTES.has(route)) return 'search:read';
  return request.method === 'GET' || request.method === 'HEAD' ? 'index:read' : 'index:write';
};

/** Who the guard let through, per request. */
const callers = new WeakMap<FastifyRequest, Principal>();

/**
 * The caller of a guarded route as an operation context, as `/api/v1` and MCP build it: the
 * authenticated subject and tenant, and the tenant as the project. Without authentication, an
 * anonymous caller in the default project.
 */
export const callerContext = (request: FastifyRequest, via: Actor['via']): OperationContext => {
  const principal = callers.get(request);
  if (!principal) {
    return { actor: { subject: 'anonymous', tenant: null, via }, correlationId: request.id, project: DEFAULT_PROJECT };
  }
  return {
    actor: { subject: principal.subject, tenant: principal.tenant, via },
    correlationId: request.id,
    project: principal.tenant,
    scopes: principal.scopes,
    ...(principal.credential ? { credential: principal.credential } : {}),
  };
};

/**
 * With authentication on, every route needs the credentials `/api/v1` takes except the public
 * ones and those that authenticate callers themselves. What is protected is decided by the route
 * that matched, never by the URL as sent, which may spell the same route differently. Refusals
 * answer in the format of the surface addressed; the caller is kept for `callerContext`.
 */
export const guardOtherSurfaces = (
  app: FastifyInstance,
  authenticator: Authenticator,
  operations: () => readonly Operation[],
) => {
  if (!authenticator.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    // No route matched: the not-found answer follows, and it reveals nothing.
    if (route === undefined) return;
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (PUBLIC_ROUTES.has(`${method} ${route}`) || request.routeOptions.config.selfAuthenticating) return;
    const scope = scopeFor(request, route, operations);
    try {
      const principal = await authenticator.authenticate(request.headers);
      if (!principal.scopes.includes(scope)) return refuse(request, reply, 403, `This action needs the '${scope}' scope`);
      // The deployment's metrics (every tenant's requests, the shared projections' lag) are the operator's.
      const actor = { subject: principal.subject, tenant: principal.tenant, via: 'rest' as const };
      if (route === '/metrics' && !isOperator({ actor, scopes: principal.scopes }))
        return refuse(request, reply, 403, `The deployment's metrics need ${OPERATOR_NEEDED}`);
      callers.set(request, principal);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'AUTHENTICATION_ERROR') throw error;
      return refuse(request, reply, 401, error.message);
    }
  });
};

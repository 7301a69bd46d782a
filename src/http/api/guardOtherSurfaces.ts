import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/metadata.js';
import { AppError } from '../../errors.js';
import {
  isOperator,
  isTool,
  OPERATOR_NEEDED,
  operationNamed,
  requiredScope,
  type Operation,
  type OperationContext,
} from '../../operations.js';
import { DEFAULT_PROJECT } from '../../domain/workspace.js';
import { SERVER_PROOF_PATH } from '../serverProof.js';
import { ERROR_DOCS_PATH } from './errorDocs.js';
import { refuse } from '../surfaceErrors.js';
import type { Authenticator, Principal } from './authenticator.js';

/**
 * What the routes that are not operations need when authentication is on, by `METHOD /route` (HEAD
 * goes with GET): null, anyone may call it; else the scope it takes. A route not listed takes
 * `index:read` to read and `index:write` otherwise. Routes of operations are not listed: each needs
 * its operation's scope, as on every surface.
 */
const OTHER_ROUTES: Readonly<Record<string, string | null>> = {
  'GET /health': null,
  [`POST ${SERVER_PROOF_PATH}`]: null,
  [`GET ${ERROR_DOCS_PATH}`]: null,
  'GET /admin': null,
  'GET /admin/': null,
  'GET /admin/console.js': null,
  'GET /admin/console.css': null,
  // And the operator's: see below.
  'GET /metrics': 'admin',
  'GET /tools/list': 'search:read',
  'GET /agents/list': 'search:read',
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route authenticates its callers itself, in its own surface's format. */
    selfAuthenticating?: boolean;
    /** The operation the route runs (the tool API's): it needs that operation's scope. */
    operation?: Operation;
  }
}

/**
 * Route config of MCP (answering in JSON-RPC) and of `/api/v1`'s own endpoints, whose route specs
 * say which are public (health, openapi.json, token refresh).
 */
export const SELF_AUTHENTICATING = { selfAuthenticating: true } as const;

/** The operation a route runs: its own, or for `/tools/:name`, the tool of the catalogue named, when one is. */
const operationOf = (request: FastifyRequest, route: string, operations: () => readonly Operation[]) => {
  const own = request.routeOptions.config.operation;
  if (own || route !== '/tools/:name') return own;
  const { name } = request.params as { name?: string };
  const named = name === undefined ? undefined : operationNamed(operations(), name);
  return named && isTool(named) ? named : undefined;
};

/** Who the guard let through, per request. */
const callers = new WeakMap<FastifyRequest, Principal>();

/**
 * The caller of a guarded route as an operation context, as `/api/v1` and MCP build it: the
 * authenticated subject and tenant, and the tenant as the project. Without authentication, an
 * anonymous, unauthenticated caller in the default project.
 */
export const callerContext = (request: FastifyRequest, via: Actor['via']): OperationContext => {
  const principal = callers.get(request);
  if (!principal) {
    return {
      actor: { subject: 'anonymous', tenant: null, via },
      correlationId: request.id,
      project: DEFAULT_PROJECT,
      unauthenticated: true,
    };
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
    if (request.routeOptions.config.selfAuthenticating) return;
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const operation = operationOf(request, route, operations);
    const listed = OTHER_ROUTES[`${method} ${route}`];
    if (!operation && listed === null) return;
    const scope = operation ? requiredScope(operation) : (listed ?? (method === 'GET' ? 'index:read' : 'index:write'));
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

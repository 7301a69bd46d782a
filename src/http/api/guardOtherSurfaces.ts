import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/metadata.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PROJECT, requiredScope, type Operation, type OperationContext } from '../../operations.js';
import { apiErrorBody } from './apiErrors.js';
import type { Authenticator, Principal } from './authenticator.js';

/** HTTP surfaces of other seeds that must not stay open once authentication is on. */
const GUARDED = /^\/(api\/v1\/annotations|tools|agents|metrics)(\/|\?|$)/;
const READS = /^\/(tools\/(search|get|sources|list)|agents\/list)(\?|$)/;
const TOOL = /^\/tools\/([^/?]+)(\?|$)/;

/** Who the guard let through, per request. */
const callers = new WeakMap<FastifyRequest, Principal>();

/** A tool that is an operation needs the operation's scope, as over MCP; the rest need a scope by route. */
const scopeFor = (request: FastifyRequest, operations: () => readonly Operation[]): string => {
  if (/^\/metrics(\?|$)/.test(request.url)) return 'admin';
  if (request.url.startsWith('/api/v1/')) return request.method === 'GET' ? 'index:read' : 'index:write';
  const tool = TOOL.exec(request.url)?.[1];
  const operation = tool === undefined ? undefined : operations().find((o) => o.name === tool);
  if (operation) return requiredScope(operation);
  return READS.test(request.url) ? 'search:read' : 'index:write';
};

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
  };
};

/**
 * With authentication on, seed 000's `/tools` and `/agents` and seed 003's annotation routes need
 * the same credentials as `/api/v1`, each answering in its own error format; the caller is kept
 * for `callerContext`.
 */
export const guardOtherSurfaces = (
  app: FastifyInstance,
  authenticator: Authenticator,
  operations: () => readonly Operation[],
) => {
  if (!authenticator.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    if (!GUARDED.test(request.url)) return;
    const scope = scopeFor(request, operations);
    let status = 0;
    let message = '';
    try {
      const principal = await authenticator.authenticate(request.headers);
      if (principal.scopes.includes(scope)) {
        callers.set(request, principal);
        return;
      }
      status = 403;
      message = `This action needs the '${scope}' scope`;
    } catch (error) {
      if (!(error instanceof AppError) || error.statusCode !== 401) throw error;
      status = 401;
      message = error.message;
    }
    if (request.url.startsWith('/api/v1/')) {
      return reply
        .status(status)
        .header('x-correlation-id', request.id)
        .send(apiErrorBody(status, message, request.id));
    }
    return reply
      .status(status)
      .send({ error: { code: status === 401 ? 'unauthorized' : 'forbidden', message } });
  });
};

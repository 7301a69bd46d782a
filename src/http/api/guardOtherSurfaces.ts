import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { apiErrorBody } from './apiErrors.js';
import type { Authenticator } from './authenticator.js';

/** HTTP surfaces of other seeds that must not stay open once authentication is on. */
const GUARDED = /^\/(api\/v1\/annotations|tools|agents|metrics)(\/|\?|$)/;
const READS = /^\/(tools\/(search|get|sources|list)|agents\/list)(\?|$)/;

const scopeFor = (request: FastifyRequest): string => {
  if (/^\/metrics(\?|$)/.test(request.url)) return 'admin';
  if (request.url.startsWith('/api/v1/')) return request.method === 'GET' ? 'index:read' : 'index:write';
  return READS.test(request.url) ? 'search:read' : 'index:write';
};

/**
 * With authentication on, seed 000's `/tools` and `/agents` and seed 003's annotation routes need
 * the same credentials as `/api/v1`, each answering in its own error format.
 */
export const guardOtherSurfaces = (app: FastifyInstance, authenticator: Authenticator) => {
  if (!authenticator.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    if (!GUARDED.test(request.url)) return;
    const scope = scopeFor(request);
    let status = 0;
    let message = '';
    try {
      const principal = await authenticator.authenticate(request.headers);
      if (principal.scopes.includes(scope)) return;
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

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refuse } from './surfaceErrors.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Answers a request that matched no route with 405 and an `Allow` header when its path has routes
 * for other methods (`TRACE /mcp`, `GET /tools/search`); returns false when the path is unknown.
 */
export const refuseOtherMethod = (
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
): boolean => {
  const path = request.url.split('?')[0] ?? '';
  const allowed = METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
  if (allowed.length === 0) return false;
  // CORS preflights are answered on every path.
  const allow = [...allowed, 'OPTIONS'].join(', ');
  void refuse(
    request,
    reply.header('allow', allow),
    405,
    `${request.method} is not supported here; use ${allow}`,
  );
  return true;
};

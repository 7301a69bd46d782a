import rateLimit from '@fastify/rate-limit';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  onSendHookHandler,
} from 'fastify';
import type { Actor } from '../domain/metadata.js';
import { RateLimitError } from '../errors.js';
import { callerContext } from './api/guardOtherSurfaces.js';
import { mcpCallerOf } from './mcpRoutes.js';

export interface CallerRateLimits {
  toolsPerMinute: number;
  mcpPerMinute: number;
}

const stamped = new WeakSet<FastifyReply>();

/** `X-RateLimit-Reset` as a Unix timestamp, as seed 002 gives it; the plugin counts seconds from now. */
export const stampRateLimitReset = (reply: FastifyReply) => {
  const reset = reply.getHeader('x-ratelimit-reset');
  if (reset === undefined || stamped.has(reply)) return;
  stamped.add(reply);
  void reply.header('x-ratelimit-reset', Math.ceil(Date.now() / 1000) + Number(reset));
};

/** One budget per authenticated caller, or per address when nobody authenticates. */
const keyOf = (actor: Actor | undefined, request: FastifyRequest) =>
  actor && actor.subject !== 'anonymous' ? `${actor.tenant ?? ''}/${actor.subject}` : `ip:${request.ip}`;

const asList = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * Limits the tool API (`/tools/*`, `/agents/*`) and MCP over HTTP per caller and minute, after
 * authentication and before the body is read; over the limit they answer 429 with `Retry-After`.
 * Register before the routes it limits.
 */
export const limitCallers = async (app: FastifyInstance, limits: CallerRateLimits) => {
  await app.register(rateLimit, { global: false });
  const limiter = (max: number, actorOf: (request: FastifyRequest) => Actor | undefined) =>
    app.rateLimit({
      max,
      timeWindow: 60_000,
      keyGenerator: (request) => keyOf(actorOf(request), request),
      errorResponseBuilder: (_request, context) =>
        new RateLimitError(Math.max(1, Math.ceil(context.ttl / 1000))),
    });
  const tools = limiter(limits.toolsPerMinute, (request) => callerContext(request, 'tools').actor);
  const mcp = limiter(limits.mcpPerMinute, (request) => mcpCallerOf(request)?.actor);
  const stampBeforeHandler: onRequestHookHandler = (_request, reply, done) => {
    stampRateLimitReset(reply);
    done();
  };
  const stampOnSend: onSendHookHandler = (_request, reply, payload, done) => {
    stampRateLimitReset(reply);
    done(null, payload);
  };

  app.addHook('onRoute', (route) => {
    const limit =
      route.url.startsWith('/tools/') || route.url.startsWith('/agents/')
        ? tools
        : route.url === '/mcp' || (route.url === '/' && route.method === 'POST')
          ? mcp
          : null;
    if (!limit) return;
    // MCP answers by itself, past onSend: its headers are final before its handler runs.
    route.onRequest = [...asList(route.onRequest), limit, stampBeforeHandler];
    route.onSend = [...asList(route.onSend), stampOnSend];
  });
};

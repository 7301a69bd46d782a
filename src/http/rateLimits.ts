import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { DEFAULT_CLASS_LIMITS } from '../domain/runtimeSettings.js';
import { RateLimitError } from '../errors.js';
import { rateClassOf, type Operation, type RateClass } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import { budgetUnder, type Budget, type ClassLimits } from './api/endpointRateLimits.js';
import { callerContext } from './api/guardOtherSurfaces.js';
import { mcpCallerOf } from './mcpCallers.js';
import { createTokenBuckets, type Taken } from './tokenBuckets.js';

export interface CallerRateLimits {
  toolsPerMinute: number;
  mcpPerMinute: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route that runs an operation counts against the budget of the operation's class, as on every surface. */
    rateClass?: RateClass;
  }
}

/**
 * The deployment's rate limits: token buckets, one per tenant (or, before anyone authenticates,
 * per address) and budget, shared by every surface.
 */
export interface RateLimits {
  /** Takes one request from `who`'s budget, with the `X-RateLimit-*` headers on `reply`; throws RateLimitError over it. */
  take(who: string, budget: Budget, reply?: FastifyReply): Taken;
  /** The budget of a rate class (and of an endpoint `METHOD /path` under `/api/v1`) under the settings in force. */
  budgetOf(rateClass: RateClass, route?: string): Budget;
  /** Takes one call of an operation from its tenant's budget; throws RateLimitError over it. */
  takeOperation(tenant: string | null, operation: Operation): void;
}

export const createRateLimits = (now: () => number = Date.now) => {
  const buckets = createTokenBuckets(now);
  let classLimits: () => ClassLimits = () => DEFAULT_CLASS_LIMITS;
  const budgetOf = budgetUnder(() => classLimits());
  const limits: RateLimits = {
    take: (who, budget, reply) => {
      const taken = buckets.take(`${who}|${budget.name}`, budget.perMinute);
      void reply
        ?.header('x-ratelimit-limit', taken.limit)
        .header('x-ratelimit-remaining', taken.remaining)
        .header('x-ratelimit-reset', taken.resetAt);
      if (taken.allowed) return taken;
      void reply?.header('retry-after', taken.retryAfterSeconds);
      throw new RateLimitError(taken.retryAfterSeconds);
    },
    budgetOf,
    takeOperation: (tenant, operation) => {
      limits.take(tenant ?? DEFAULT_PROJECT, budgetOf(rateClassOf(operation)));
    },
  };
  return {
    limits,
    /** The class settings in force, from the module that keeps the runtime settings; their defaults until then. */
    followClassLimits: (source: () => ClassLimits) => {
      classLimits = source;
    },
  };
};

const registry = new WeakMap<FastifyInstance, ReturnType<typeof createRateLimits>>();

/** The rate limits of an app `limitCallers` was given. */
export const rateLimitsOf = (app: FastifyInstance): RateLimits => registry.get(app)!.limits;

/** Lets the module that keeps the runtime settings size the class budgets. */
export const limitClassesWith = (app: FastifyInstance, source: () => ClassLimits) => {
  registry.get(app)?.followClassLimits(source);
};

const asList = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * Limits the tool API (`/tools/*`, `/agents/*`) and MCP over HTTP per tenant, after authentication
 * and before the body is read; over the limit they answer 429 with `Retry-After` in their own error
 * format. A tool that runs an operation counts against the operation's class budget, shared with
 * `/api/v1` and MCP's tool calls; the rest of each surface has a budget of its own. Without
 * authentication every caller is the default tenant, whatever its address.
 * Register before the routes it limits.
 */
export const limitCallers = (app: FastifyInstance, surfaces: CallerRateLimits, now?: () => number) => {
  const created = createRateLimits(now);
  registry.set(app, created);
  const { limits } = created;
  const limiter =
    (budgetOf: (request: FastifyRequest) => Budget, tenantOf: (request: FastifyRequest) => string): onRequestHookHandler =>
    (request, reply, done) => {
      try {
        limits.take(tenantOf(request), budgetOf(request), reply);
        done();
      } catch (error) {
        done(error as Error);
      }
    };
  const tools = limiter(
    (request) => {
      const { rateClass } = request.routeOptions.config;
      return rateClass ? limits.budgetOf(rateClass) : { name: 'tools', perMinute: surfaces.toolsPerMinute };
    },
    (request) => callerContext(request, 'tools').project,
  );
  const mcp = limiter(
    () => ({ name: 'mcp', perMinute: surfaces.mcpPerMinute }),
    (request) => mcpCallerOf(request)?.actor.tenant ?? DEFAULT_PROJECT,
  );

  app.addHook('onRoute', (route) => {
    const limit =
      route.url.startsWith('/tools/') || route.url.startsWith('/agents/')
        ? tools
        : route.url === '/mcp' || (route.url === '/' && route.method === 'POST')
          ? mcp
          : null;
    // MCP authenticates in a route hook of its own: this one comes after it.
    if (limit) route.onRequest = [...asList(route.onRequest), limit];
  });
};

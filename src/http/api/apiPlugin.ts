import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AuthorizationError } from '../../domain/auth.js';
import type { Actor } from '../../domain/metadata.js';
import { NotFoundError, UnavailableError, ValidationError } from '../../errors.js';
import { httpRefusal } from '../httpRefusals.js';
import { callOperation, type Operation, type OperationContext } from '../../operations.js';
import { parseInput, queryFields } from '../../validation.js';
import { refuseOtherMethod } from '../allowedMethods.js';
import type { RateLimits } from '../rateLimits.js';
import type { ApiMetrics } from './apiMetrics.js';
import { correlationIdOf, toApiError } from './apiErrors.js';
import { OPEN_PRINCIPAL, type Authenticator, type Principal } from './authenticator.js';
import { SELF_AUTHENTICATING } from './guardOtherSurfaces.js';
import {
  DECLARED_ROUTE_KEYS,
  operationRouteSpec,
  PER_OPERATION,
  ROUTE_SPECS,
  routeKeyOf,
  type RateClass,
  type RouteKey,
  type RouteSpec,
} from './routeSpecs.js';
import type { RouteHandler } from './routeSpec.js';

/** Routes of the table answered by a function rather than an operation. */
export type ApiHandlers = Record<RouteKey, RouteHandler>;

export interface ApiPluginOptions {
  authenticator: Authenticator;
  handlers: ApiHandlers;
  /** The deployment's rate limits, shared with the other surfaces. */
  limits: RateLimits;
  metrics: ApiMetrics;
  openapi(): unknown;
  bodyLimitBytes: number;
  /** What calling the operation of this name needs; null when there is none. */
  operationNeeds(name: string): { scope: string; rateClass: RateClass } | null;
  /** The catalogue: every operation that declares a route is mounted with it; a route of the table that none declares, with its handler. */
  operations?: readonly Operation[];
}

/** A REST caller as an actor: an open deployment's caller has no tenant. */
export const actorOf = (principal: Principal, via: Actor['via']): Actor => ({
  subject: principal.subject,
  tenant: principal.method === 'open' ? null : principal.tenant,
  via,
});

/**
 * The context an operation runs in for an authenticated caller: its tenant is its project, its
 * scopes bound it. An open deployment's caller has no tenant (see `callOperation` for `withinTenant`).
 */
export const restContext = (principal: Principal | null, correlationId: string): OperationContext => {
  const caller = principal ?? OPEN_PRINCIPAL;
  return {
    actor: actorOf(caller, 'rest'),
    correlationId,
    project: caller.tenant,
    ...(caller.method === 'open' ? { unauthenticated: true } : { scopes: caller.scopes }),
    ...(caller.credential ? { credential: caller.credential } : {}),
  };
};

const isNumber = (schema: z.ZodType | undefined): boolean => {
  const def = (schema as { def?: { type: string; innerType?: z.ZodType } } | undefined)?.def;
  if (!def) return false;
  if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') return isNumber(def.innerType);
  return def.type === 'number';
};

/** An operation's input from a request: the body, the declared query fields (numbers as numbers) and the path parameters. */
const inputOf = (operation: Operation, request: FastifyRequest): Record<string, unknown> => {
  const route = operation.rest!;
  if (request.body !== undefined && (request.body === null || typeof request.body !== 'object' || Array.isArray(request.body)))
    throw new ValidationError('The request body must be a JSON object of the fields the route takes');
  const body = request.body ?? {};
  const query = queryFields(operation.input, request.query);
  const shape = operation.input.shape as Record<string, z.ZodType>;
  const fromQuery = Object.fromEntries(
    (route.query ?? []).flatMap((field) => {
      const value = query[field];
      if (value === undefined) return [];
      const number = typeof value === 'string' && isNumber(shape[field]) && value.trim() !== '' ? Number(value) : NaN;
      return [[field, Number.isNaN(number) ? value : number]];
    }),
  );
  const fromPath = Object.fromEntries(
    Object.entries(request.params as Record<string, string>).map(([param, value]) => [route.params?.[param] ?? param, value]),
  );
  return { ...body, ...fromQuery, ...fromPath };
};

/** A route's path as fastify writes it: `/connectors/{id}` is `/connectors/:id`. */
const fastifyPath = (url: string) => url.replace(/\{(\w+)\}/g, ':$1');

const NO_FIELDS = z.object({}).strict();

/** A route whose query is strict refuses a query field it does not declare, as its input would refuse it. */
const refuseUndeclaredQuery = (spec: RouteSpec, request: FastifyRequest) => {
  if (spec.query?.def.catchall?._zod.def.type !== 'never') return;
  const declared = spec.query.shape;
  const undeclared = Object.entries(request.query as Record<string, unknown>).filter(([field]) => !(field in declared));
  if (undeclared.length) parseInput(NO_FIELDS, Object.fromEntries(undeclared));
};

interface RouteConfig {
  spec?: RouteSpec;
}

interface RequestState {
  correlationId: string;
  principal: Principal | null;
  /** The rate class of a per-operation route, once its operation is known. */
  rateClass?: RateClass;
  /** A refusal found before the rate limit counted the request: answered after it, with its headers. */
  refusal?: Error;
}

const specOf = (request: FastifyRequest): RouteSpec | undefined =>
  (request.routeOptions.config as RouteConfig).spec;

/**
 * `/api/v1` as the REST API defines it: its own error format and not-found answer, authentication and
 * scopes per endpoint, rate limits per tenant and budget (shared with the other surfaces), and validated input.
 */
export const apiPlugin: FastifyPluginCallback<ApiPluginOptions> = (api, options, done) => {
  const { authenticator, handlers, metrics } = options;
  const states = new WeakMap<FastifyRequest, RequestState>();
  const stateOf = (request: FastifyRequest): RequestState => {
    let state = states.get(request);
    if (!state) {
      state = { correlationId: correlationIdOf(request), principal: null };
      states.set(request, state);
    }
    return state;
  };

  api.setErrorHandler((error, request, reply) => {
    const { correlationId } = stateOf(request);
    const { status, body } = toApiError(error, request, correlationId);
    return reply.status(status).header('x-correlation-id', correlationId).send(body);
  });
  api.setNotFoundHandler((request, reply) => {
    if (refuseOtherMethod(api, request, reply)) return reply;
    const { correlationId } = stateOf(request);
    const { status, body } = toApiError(httpRefusal(404, `No endpoint ${request.method} ${request.url}`), request, correlationId);
    return reply.status(status).header('x-correlation-id', correlationId).send(body);
  });

  api.addHook('onRequest', async (request, reply) => {
    const state = stateOf(request);
    void reply.header('x-correlation-id', state.correlationId);
    const spec = specOf(request);
    if (spec?.scope) {
      try {
        await authorize(request, spec.scope, state);
      } catch (error) {
        state.refusal = error as Error;
      }
    }
    const rateClass = rateClassOf(request);
    if (!rateClass) return;
    // A tenant's budget, whichever of its keys or surfaces it calls with; before authentication, the address's.
    const who = state.principal ? state.principal.tenant : `ip:${request.ip}`;
    options.limits.take(who, options.limits.budgetOf(rateClass, routeOf(request)), reply);
  });
  // After the rate limit, so refusals carry its headers too.
  api.addHook('preParsing', (request, _reply, payload, done) => {
    done(stateOf(request).refusal ?? null, payload);
  });
  const authorize = async (request: FastifyRequest, needed: NonNullable<RouteSpec['scope']>, state: RequestState) => {
    const principal = await authenticator.authenticate(request.headers);
    state.principal = principal;
    let scope = needed;
    if (scope === PER_OPERATION) {
      const { name } = request.params as { name: string };
      const needs = options.operationNeeds(name);
      if (!needs) throw new NotFoundError(`No operation named '${name}'`);
      scope = needs.scope as typeof scope;
      state.rateClass = needs.rateClass;
    }
    if (!principal.scopes.includes(scope)) throw new AuthorizationError(scope);
  };
  const rateClassOf = (request: FastifyRequest): RateClass | undefined => {
    const rateClass = specOf(request)?.rateClass ?? undefined;
    return rateClass === PER_OPERATION ? stateOf(request).rateClass : rateClass;
  };

  /** The route as the limits table names it, `METHOD /path`. */
  const routeOf = (request: FastifyRequest) => {
    const spec = specOf(request);
    return spec ? `${spec.method} ${spec.url}` : undefined;
  };
  api.addHook('onResponse', async (request, reply) => {
    const failed = reply.statusCode >= 500;
    if (rateClassOf(request) === 'search') metrics.recordSearch(reply.elapsedTime, failed);
    else metrics.recordRequest(failed);
  });

  const parse = (schema: z.ZodType | undefined, value: unknown) =>
    schema ? parseInput(schema, value ?? {}) : {};

  const mounted = new Set<string>();
  for (const operation of options.operations ?? []) {
    const spec = operationRouteSpec(operation);
    if (!spec) continue;
    mounted.add(routeKeyOf(spec));
    api.route({
      method: spec.method,
      url: fastifyPath(spec.url),
      bodyLimit: options.bodyLimitBytes,
      config: { spec, ...SELF_AUTHENTICATING },
      handler: async (request, reply) => {
        const state = stateOf(request);
        try {
          refuseUndeclaredQuery(spec, request);
          const result = await callOperation(
            operation,
            inputOf(operation, request),
            restContext(state.principal, state.correlationId),
          );
          return await reply.status(spec.status).send(result);
        } catch (error) {
          if (operation.rest?.errorFormat !== 'tools') throw error;
          const { status, body } = toApiError(error, request, state.correlationId, 'tools');
          return reply.status(status).send(body);
        }
      },
    });
  }

  for (const spec of ROUTE_SPECS) {
    if (mounted.has(routeKeyOf(spec))) continue;
    const handler = (handlers as Partial<Record<string, RouteHandler>>)[routeKeyOf(spec)];
    if (!handler && DECLARED_ROUTE_KEYS.has(routeKeyOf(spec))) {
      // A route whose operation's module this deployment leaves out answers that it is not available.
      api.route({
        method: spec.method,
        url: fastifyPath(spec.url),
        config: { spec, ...SELF_AUTHENTICATING },
        handler: () => {
          throw new UnavailableError(`${spec.method} /api/v1${spec.url} is not available in this deployment`);
        },
      });
      continue;
    }
    if (!handler) throw new Error(`No operation or handler answers ${routeKeyOf(spec)}`);
    api.route({
      method: spec.method,
      url: fastifyPath(spec.url),
      bodyLimit: options.bodyLimitBytes,
      config: { spec, ...SELF_AUTHENTICATING },
      handler: async (request, reply) => {
        const state = stateOf(request);
        const principal = state.principal;
        const result = await handler({
          params: parse(spec.params, request.params) as Record<string, unknown>,
          query: parse(spec.query, spec.query ? queryFields(spec.query, request.query) : undefined) as Record<string, unknown>,
          body: spec.body ? parseInput(spec.body, request.body ?? {}) : undefined,
          principal,
          context: {
            actor: {
              subject: principal?.subject ?? 'anonymous',
              tenant: principal?.tenant ?? null,
              via: 'rest',
            },
            correlationId: state.correlationId,
            project: principal?.tenant ?? 'default',
          },
        });
        if (spec.status === 204) return reply.status(204).send();
        return reply.status(spec.status).send(result);
      },
    });
  }
  api.get('/openapi.json', { config: SELF_AUTHENTICATING }, () =>
    Promise.resolve(options.openapi()),
  );
  done();
};

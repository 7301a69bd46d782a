import { z } from 'zod';
import type { Scope } from '../../domain/auth.js';
import { rateClassOf, requiredScope, type Operation, type RateClass } from '../../operations.js';
import { ROUTE_SURFACES } from '../../modules/apiSurfaces.js';
import * as s from './schemas.js';
import { PER_OPERATION, type RouteSpec } from './routeSpec.js';

export type { RateClass };
export { PER_OPERATION, type RouteSpec };

/** Routes answered by handlers of their own. */
const HANDLED_SPECS = [
  {
    method: 'POST',
    url: '/operations/{name}',
    summary:
      'Run an operation of the catalogue (the MCP tools) by name, with its input as the body; ' +
      'it needs the scope and counts against the rate class of that operation',
    scope: PER_OPERATION,
    rateClass: PER_OPERATION,
    params: s.OperationNameParamsSchema,
    body: s.OperationInputSchema,
    status: 200,
    response: s.OperationOutputSchema,
  },
] as const satisfies readonly RouteSpec[];

type Spec = (typeof HANDLED_SPECS)[number];
/** `POST /search`, … : one key per endpoint. */
type KeyOf<S> = S extends { method: infer M extends string; url: infer U extends string }
  ? `${M} ${U}`
  : never;
export type RouteKey = KeyOf<Spec>;

/** `METHOD /path`, as route keys and the rate limits table name a route. */
export const routeKeyOf = (spec: Pick<RouteSpec, 'method' | 'url'>) => `${spec.method} ${spec.url}`;

/** The route of an operation that declares one, with its input split into path, query and body. */
export const operationRouteSpec = (operation: Pick<Operation, 'toolset' | 'writes' | 'scope' | 'input' | 'output' | 'rest'>): RouteSpec | null => {
  const route = operation.rest;
  if (!route) return null;
  const shape = operation.input.shape;
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const fieldOf = (param: string) => route.params?.[param] ?? param;
  const query = route.query ?? [];
  const taken = new Set([...params.map(fieldOf), ...query]);
  const bodyShape = Object.fromEntries(Object.entries(shape).filter(([field]) => !taken.has(field)));
  // An operation without input takes no body.
  const withBody = route.method !== 'GET' && route.method !== 'DELETE' && Object.keys(shape).length > 0;
  // A strict input keeps its body and its query string strict.
  const { catchall } = operation.input.def;
  const strict = (fields: Record<string, z.ZodType>) => (catchall ? z.object(fields).catchall(catchall) : z.object(fields));
  const body = strict(bodyShape);
  const status = route.status ?? 200;
  return {
    method: route.method,
    url: route.path,
    summary: route.summary,
    scope: route.anonymous ? null : (requiredScope(operation) as Scope),
    rateClass: route.rateClass === null ? null : rateClassOf(operation),
    ...(params.length ? { params: z.object(Object.fromEntries(params.map((p) => [p, shape[fieldOf(p)] ?? z.string()]))) } : {}),
    ...(query.length ? { query: strict(Object.fromEntries(query.map((q) => [q, shape[q]!]))) } : {}),
    ...(withBody ? { body } : {}),
    status,
    response: status === 204 ? null : operation.output,
  };
};

const DECLARED_SPECS = ROUTE_SURFACES.flatMap((surfaces) => operationRouteSpec(surfaces) ?? []);

/** Every route of `/api/v1` the REST API defines: those with handlers of their own and those of the operations that declare one. */
export const ROUTE_SPECS: readonly RouteSpec[] = [...HANDLED_SPECS, ...DECLARED_SPECS];

/** The routes operations declare, by `METHOD /path`. */
export const DECLARED_ROUTE_KEYS: ReadonlySet<string> = new Set(DECLARED_SPECS.map((spec) => routeKeyOf(spec)));

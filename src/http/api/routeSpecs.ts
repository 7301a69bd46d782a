import { z } from 'zod';
import type { Scope } from '../../domain/auth.js';
import { rateClassOf, requiredScope, type Operation, type RateClass } from '../../operations.js';
import { ADMIN_ROUTE_SPECS } from './adminRoutes.js';
import { FORGET_ROUTE_SPECS } from './forgetRoutes.js';
import { AUDIT_ROUTE_SPECS } from './auditRoutes.js';
import * as s from './schemas.js';
import { PER_OPERATION, type RouteSpec } from './routeSpec.js';

export type { RateClass };
export { PER_OPERATION, type RouteSpec };

export const ROUTE_SPECS = [
  {
    method: 'GET',
    url: '/health',
    summary: 'Health check',
    scope: null,
    rateClass: null,
    status: 200,
    response: s.HealthResponseSchema,
  },
  {
    method: 'GET',
    url: '/status',
    summary: 'Detailed system status',
    scope: 'index:read',
    rateClass: 'index',
    status: 200,
    response: s.StatusResponseSchema,
  },
  {
    method: 'POST',
    url: '/search',
    summary: 'Search every indexed source',
    scope: 'search:read',
    rateClass: 'search',
    body: s.SearchRequestSchema,
    status: 200,
    response: s.SearchResponseSchema,
  },
  {
    method: 'GET',
    url: '/search/suggestions',
    summary: 'Query suggestions from indexed titles, symbols and frequent terms',
    scope: 'search:read',
    rateClass: 'search',
    query: s.SuggestionsQuerySchema,
    status: 200,
    response: s.SuggestionsResponseSchema,
  },
  {
    method: 'POST',
    url: '/index/start',
    summary: 'Start indexing',
    scope: 'index:write',
    rateClass: 'index',
    body: s.IndexStartRequestSchema,
    status: 202,
    response: s.IndexStartResponseSchema,
  },
  {
    method: 'POST',
    url: '/index/stop',
    summary: 'Stop ongoing indexing',
    scope: 'index:write',
    rateClass: 'index',
    status: 200,
    response: s.IndexStopResponseSchema,
  },
  {
    method: 'GET',
    url: '/index/status',
    summary: 'Indexing status',
    scope: 'index:read',
    rateClass: 'index',
    status: 200,
    response: s.IndexStatusResponseSchema,
  },
  {
    method: 'POST',
    url: '/index/force-reindex',
    summary: 'Force a full reindex',
    scope: 'index:write',
    rateClass: 'index',
    body: s.ForceReindexRequestSchema,
    status: 202,
    response: s.ForceReindexResponseSchema,
  },
  {
    method: 'GET',
    url: '/connectors',
    summary: 'List connectors',
    scope: 'connectors:read',
    rateClass: 'connectors',
    status: 200,
    response: s.ConnectorListSchema,
  },
  {
    method: 'POST',
    url: '/connectors',
    summary: 'Add a connector',
    scope: 'connectors:write',
    rateClass: 'connectors',
    body: s.ConnectorCreateSchema,
    status: 201,
    response: s.ConnectorCreatedSchema,
  },
  {
    method: 'GET',
    url: '/connectors/{id}',
    summary: 'Connector details',
    scope: 'connectors:read',
    rateClass: 'connectors',
    params: s.ConnectorIdParamsSchema,
    status: 200,
    response: s.ConnectorDetailSchema,
  },
  {
    method: 'PUT',
    url: '/connectors/{id}',
    summary: 'Update a connector',
    scope: 'connectors:write',
    rateClass: 'connectors',
    params: s.ConnectorIdParamsSchema,
    body: s.ConnectorUpdateSchema,
    status: 200,
    response: s.ConnectorUpdatedSchema,
  },
  {
    method: 'DELETE',
    url: '/connectors/{id}',
    summary: 'Remove a connector',
    scope: 'connectors:write',
    rateClass: 'connectors',
    params: s.ConnectorIdParamsSchema,
    status: 204,
    response: null,
  },
  {
    method: 'GET',
    url: '/config',
    summary: 'Current configuration',
    scope: 'config:read',
    rateClass: 'config',
    status: 200,
    response: s.SettingsSchema,
  },
  {
    method: 'PATCH',
    url: '/config',
    summary: 'Update configuration',
    scope: 'config:write',
    rateClass: 'config',
    body: s.ConfigPatchSchema,
    status: 200,
    response: s.ConfigPatchResponseSchema,
  },
  {
    method: 'POST',
    url: '/auth/refresh',
    summary: 'Exchange a refresh token for new tokens',
    scope: null,
    rateClass: 'auth',
    body: s.RefreshRequestSchema,
    status: 200,
    response: s.RefreshResponseSchema,
  },
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
  ...ADMIN_ROUTE_SPECS,
  ...FORGET_ROUTE_SPECS,
  ...AUDIT_ROUTE_SPECS,
] as const satisfies readonly RouteSpec[];

type Spec = (typeof ROUTE_SPECS)[number];
/** `POST /search`, … : one key per endpoint. */
type KeyOf<S> = S extends { method: infer M extends string; url: infer U extends string }
  ? `${M} ${U}`
  : never;
export type RouteKey = KeyOf<Spec>;

/** The route of an operation that declares one, with its input split into path, query and body. */
export const operationRouteSpec = (operation: Operation): RouteSpec | null => {
  const route = operation.rest;
  if (!route) return null;
  const shape = operation.input.shape;
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const fieldOf = (param: string) => route.params?.[param] ?? param;
  const query = route.query ?? [];
  const taken = new Set([...params.map(fieldOf), ...query]);
  const withBody = route.method !== 'GET' && route.method !== 'DELETE';
  const bodyShape = Object.fromEntries(Object.entries(shape).filter(([field]) => !taken.has(field)));
  return {
    method: route.method,
    url: route.path,
    summary: route.summary,
    scope: requiredScope(operation) as Scope,
    rateClass: rateClassOf(operation),
    ...(params.length ? { params: z.object(Object.fromEntries(params.map((p) => [p, shape[fieldOf(p)] ?? z.string()]))) } : {}),
    ...(query.length ? { query: z.object(Object.fromEntries(query.map((q) => [q, shape[q]!]))) } : {}),
    ...(withBody ? { body: z.object(bodyShape) } : {}),
    status: route.status ?? 200,
    response: operation.output,
  };
};

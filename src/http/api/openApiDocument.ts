import { z } from 'zod';
import type { Operation } from '../../operations.js';
import { operationRouteSpec, PER_OPERATION, ROUTE_SPECS, routeKeyOf, type RouteSpec } from './routeSpecs.js';
import { ErrorSchema } from './schemas.js';

const REF = '#/components/schemas/';

/** Names the REST API gives its schemas. */
const SEED_NAMES: Record<string, string> = { 'POST /search': 'Search' };

/** `PUT /connectors/{id}` → `PutConnectorsIdRequest`. */
const nameOf = (spec: RouteSpec, suffix: string) =>
  (suffix && SEED_NAMES[`${spec.method} ${spec.url}`]
    ? SEED_NAMES[`${spec.method} ${spec.url}`]! + suffix
    : null) ??
  [spec.method.toLowerCase(), ...spec.url.split(/[/{}-]+/)]
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('') + suffix;

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'Invalid request (VALIDATION_ERROR)',
  '401': 'Missing or invalid credentials (AUTHENTICATION_ERROR)',
  '403': 'The credentials lack the scope (AUTHORIZATION_ERROR)',
  '404': 'Not found, or not visible to this tenant (NOT_FOUND_ERROR)',
  '413': 'Request body too large',
  '429': 'Rate limit exceeded (RATE_LIMIT_ERROR)',
  '500': 'Unexpected error (INTERNAL_ERROR)',
};

const RATE_HEADERS = {
  'X-RateLimit-Limit': {
    schema: { type: 'integer' },
    description: 'Requests allowed per minute in this endpoint class',
  },
  'X-RateLimit-Remaining': {
    schema: { type: 'integer' },
    description: 'Requests left in the current window',
  },
  'X-RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix timestamp when the window resets' },
  'X-Correlation-Id': {
    schema: { type: 'string' },
    description: 'The request correlation id (kept when the client sends one)',
  },
};

const toSchemas = (entries: [string, z.ZodType][], io: 'input' | 'output') => {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of entries) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'openapi-3.0',
    io,
    uri: (id) => `${REF}${id}`,
    unrepresentable: 'any',
  });
  // OpenAPI 3.0 Schema Objects have no `$schema` or `$id`: a component is named by its key.
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => [
      id,
      Object.fromEntries(Object.entries(schema).filter(([k]) => !['$schema', '$id', 'id'].includes(k))),
    ]),
  );
};

/** Query and path parameters of a route, from its zod objects. */
const parametersOf = (spec: RouteSpec) =>
  (['path', 'query'] as const).flatMap((where) => {
    const schema = where === 'path' ? spec.params : spec.query;
    if (!schema) return [];
    const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }) as {
      properties?: Record<string, object>;
      required?: string[];
    };
    return Object.entries(json.properties ?? {}).map(([name, property]) => ({
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      schema: property,
    }));
  });

/** The OpenAPI 3 document of `/api/v1`, generated from the route specs, the catalogue's routes and their zod schemas. */
export const buildOpenApiDocument = (version: string, operations: readonly Operation[]) => {
  const listed = new Set(ROUTE_SPECS.map(routeKeyOf));
  const specs = [
    ...ROUTE_SPECS,
    ...operations.flatMap((operation) => operationRouteSpec(operation) ?? []).filter((spec) => !listed.has(routeKeyOf(spec))),
  ];
  const requests = specs.flatMap((spec): [string, z.ZodType][] =>
    spec.body ? [[nameOf(spec, 'Request'), spec.body]] : [],
  );
  const responses = specs.flatMap((spec): [string, z.ZodType][] =>
    spec.response ? [[nameOf(spec, 'Response'), spec.response]] : [],
  );
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const errors = [
      ...(spec.body || spec.query || spec.params ? ['400'] : []),
      ...(spec.scope ? ['401', '403'] : []),
      ...(spec.params ? ['404'] : []),
      ...(spec.body ? ['413'] : []),
      ...(spec.rateClass ? ['429'] : []),
      '500',
    ];
    const parameters = parametersOf(spec);
    (paths[spec.url] ??= {})[spec.method.toLowerCase()] = {
      summary: spec.summary,
      operationId: nameOf(spec, '').replace(/^./, (c) => c.toLowerCase()),
      security: spec.scope
        ? [{ bearerAuth: spec.scope === PER_OPERATION ? [] : [spec.scope] }, { apiKeyAuth: [] }]
        : [],
      ...(spec.scope ? { 'x-required-scope': spec.scope } : {}),
      ...(spec.rateClass ? { 'x-rate-limit-class': spec.rateClass } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: `${REF}${nameOf(spec, 'Request')}` } } },
            },
          }
        : {}),
      responses: {
        [String(spec.status)]: {
          description: spec.summary,
          ...(spec.rateClass ? { headers: RATE_HEADERS } : {}),
          ...(spec.response
            ? { content: { 'application/json': { schema: { $ref: `${REF}${nameOf(spec, 'Response')}` } } } }
            : {}),
        },
        ...Object.fromEntries(
          errors.map((status) => [
            status,
            {
              description: ERROR_RESPONSES[status],
              ...(status === '429'
                ? { headers: { 'Retry-After': { schema: { type: 'integer' } }, ...RATE_HEADERS } }
                : {}),
              content: { 'application/json': { schema: { $ref: `${REF}Error` } } },
            },
          ]),
        ),
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Context Ledger API',
      version,
      description:
        'Search, indexing, connectors and configuration of a Context Ledger (REST API v1).',
    },
    servers: [{ url: '/api/v1' }],
    security: [{ bearerAuth: [] }, { apiKeyAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: {
        ...toSchemas([['Error', ErrorSchema], ...requests], 'input'),
        ...toSchemas(responses, 'output'),
      },
    },
    paths,
  };
};

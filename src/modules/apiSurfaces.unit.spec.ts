import { describe, expect, it } from 'vitest';
import { ScopeSchema } from '../domain/auth.js';
import { requiredScope, type RouteSurfaces } from '../operations.js';
import { ROUTE_SURFACES } from './apiSurfaces.js';

const routes = ROUTE_SURFACES.map(
  (surfaces) => [`${surfaces.rest.method} ${surfaces.rest.path}`, surfaces] as const,
);
const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
const fieldsOf = (surfaces: RouteSurfaces) => Object.keys(surfaces.input.shape);

describe('the routes operations declare', () => {
  it('are each declared once', () => {
    const keys = routes.map(([key]) => key);
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });

  it.each(routes)('%s fills an input field from each of its path parameters', (_key, surfaces) => {
    for (const param of pathParams(surfaces.rest.path)) {
      expect(fieldsOf(surfaces)).toContain(surfaces.rest.params?.[param] ?? param);
    }
  });

  it.each(routes)(
    '%s reads only input fields from its query string, and maps only path parameters it has',
    (_key, surfaces) => {
      for (const field of surfaces.rest.query ?? []) expect(fieldsOf(surfaces)).toContain(field);
      for (const param of Object.keys(surfaces.rest.params ?? {}))
        expect(pathParams(surfaces.rest.path)).toContain(param);
    },
  );

  it.each(routes)('%s needs a scope that exists, a writing one when it writes', (_key, surfaces) => {
    const scope = requiredScope(surfaces);
    expect(ScopeSchema.safeParse(scope).success).toBe(true);
    if (surfaces.writes) expect(scope).not.toMatch(/:read$/);
  });
});

import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import {
  SearchRequestSchema,
  SearchResponseSchema,
  searchWithWorkContext,
  type WorkContextSearchDeps,
} from './searchWithWorkContext.js';

/** Over MCP, `context.search` answers these requests too. */
export const searchApiSurfaces = {
  name: 'search.work_context',
  tool: false,
  toolset: 'search',
  writes: false,
  scope: 'search:read',
  input: SearchRequestSchema,
  output: SearchResponseSchema,
  rest: { method: 'POST', path: '/search', summary: 'Search every indexed source', rateClass: 'search' },
} as const satisfies RouteSurfaces;

export const searchApiOperation = (deps: WorkContextSearchDeps) =>
  defineOperation({
    ...searchApiSurfaces,
    title: 'Search with work context',
    description: 'Searches every indexed source, boosting what is near the active file, branch and tickets.',
    run: (input, context) => searchWithWorkContext(deps, input, context),
  });

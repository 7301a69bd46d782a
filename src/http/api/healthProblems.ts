import type { ProjectionRunner } from '../../engine/projectionRunner.js';

export interface HealthProblem {
  /** The service of the REST API's health answer it degrades: `search` for the search indexes, `index` for the rest. */
  service: 'search' | 'index';
  projection: string;
  error: string;
  since: string;
}

const SEARCH_INDEXES = /^(keyword|semantic)(_|$)/;

/**
 * The read models whose last batch failed (a backing server down or failing), while it lasts: they
 * retry on their own, and the first batch that succeeds clears the error.
 */
export const projectionProblems = async (projections: ProjectionRunner): Promise<HealthProblem[]> => {
  let statuses;
  try {
    statuses = await projections.status();
  } catch (error) {
    // Their status reads the event store: when it cannot be read, nothing new is indexed.
    return [{ service: 'index', projection: '$all', error: (error as Error).message, since: new Date().toISOString() }];
  }
  return statuses.flatMap((status) =>
    status.lastError
      ? [
          {
            service: SEARCH_INDEXES.test(status.name) ? ('search' as const) : ('index' as const),
            projection: status.name,
            error: status.lastError.message,
            since: status.lastError.at,
          },
        ]
      : [],
  );
};

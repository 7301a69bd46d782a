import { healthOperation, healthSurfaces } from '../../queries/health/health.js';
import { systemStatusOperation, systemStatusSurfaces } from '../../queries/health/systemStatus.js';
import { UnavailableError } from '../errors.js';
import { authEnabled } from '../http/api/authenticator.js';
import { projectionProblems } from '../http/api/healthProblems.js';
import { PRODUCT_VERSION } from '../http/api/version.js';
import type { LedgerModule } from '../module.js';
import { callOperation } from '../operations.js';

/** Without the REST API nothing is measured. */
const NOTHING_MEASURED = { avgQueryLatencyMs: 0, queriesPerMinute: 0, errorRate: 0 };

/** Health and status: whether the deployment answers, and how its indexing and API are doing. */
export const healthModule: LedgerModule = {
  name: 'health',
  setup: ({ config, db, readModels, projections, features }) =>
    Promise.resolve({
      operations: [
        healthOperation({
          version: PRODUCT_VERSION,
          databaseAnswers: () => db.query('SELECT 1').then(() => true, () => false),
          problems: async () => {
            const problems = await projectionProblems(projections());
            // A keyword index on a server of its own may be out of reach with nothing to write.
            const unreachable = problems.some((p) => p.projection === 'keyword') ? undefined : await features().search?.keywordIndexProblem();
            return unreachable
              ? [...problems, { service: 'search' as const, projection: 'keyword', error: unreachable, since: new Date().toISOString() }]
              : problems;
          },
          searchAvailable: () => features().search !== undefined,
          authEnabled: authEnabled(config),
        }),
        systemStatusOperation({
          readModels,
          indexStatus: (call) => {
            const jobs = features().jobs;
            if (!jobs) return Promise.reject(new UnavailableError('Background indexing is not available in this deployment'));
            return callOperation(jobs.indexStatus, {}, call, { onBehalf: true });
          },
          performance: () => features().access?.performance() ?? NOTHING_MEASURED,
        }),
      ],
    }),
  surfaces: [healthSurfaces, systemStatusSurfaces],
};

import { z } from 'zod';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';

const ProblemSchema = z.object({ service: z.string(), projection: z.string(), error: z.string(), since: z.string() });
type Problem = z.output<typeof ProblemSchema>;

export const healthSurfaces = {
  name: 'health',
  tool: false,
  toolset: 'admin',
  writes: false,
  input: z.object({}),
  output: z.object({
    status: z.enum(['healthy', 'degraded']),
    version: z.string(),
    timestamp: z.string(),
    services: z.object({ index: z.string(), search: z.string(), connectors: z.string() }),
    /**
     * What makes a service degraded while it lasts: a read model that cannot be written (its server
     * down), and why. Left out for an anonymous caller where authentication is on.
     */
    problems: z.array(ProblemSchema).optional(),
  }),
  rest: { method: 'GET', path: '/health', summary: 'Health check', anonymous: true, rateClass: null },
} as const satisfies RouteSurfaces;

export interface HealthDeps {
  version: string;
  databaseAnswers(): Promise<boolean>;
  /** The read models whose last batch failed, while it lasts. */
  problems(): Promise<Problem[]>;
  searchAvailable(): boolean;
  /** Whether callers must authenticate: an anonymous one then learns the status, not the servers' errors. */
  authEnabled: boolean;
}

/** Whether the ledger can index and search now: a service is degraded while one of its read models cannot be written. */
export const healthOperation = (deps: HealthDeps) =>
  defineOperation({
    ...healthSurfaces,
    title: 'Health check',
    description: 'Whether the database answers and the index and search read models are being written.',
    run: async (_input, context) => {
      const database = (await deps.databaseAnswers()) ? 'healthy' : 'unhealthy';
      const problems = database === 'healthy' ? await deps.problems() : [];
      const degradedUnless = (service: string) => (problems.some((p) => p.service === service) ? 'degraded' : database);
      const searchable = deps.searchAvailable() ? degradedUnless('search') : 'unavailable';
      const index = degradedUnless('index');
      return {
        status: index === 'healthy' && searchable === 'healthy' ? ('healthy' as const) : ('degraded' as const),
        version: deps.version,
        timestamp: new Date().toISOString(),
        services: { index, search: searchable, connectors: database },
        // Their errors name the servers behind the ledger: not for anyone who can reach the port.
        ...(problems.length && !(deps.authEnabled && context.unauthenticated) ? { problems } : {}),
      };
    },
  });

import { z } from 'zod';
import { jobsProjection } from '../../../projections/jobs.js';
import type { JobView } from '../../domain/jobView.js';
import { streamId } from '../../domain/events.js';
import { JobPhaseSchema, JobStatusSchema } from '../../domain/jobs.js';
import { ProjectionStatusOutputSchema, projectionStatusView } from '../../../queries/projectionStatus.js';
import type { ProjectionRunner } from '../../engine/projectionRunner.js';
import { UnavailableError } from '../../errors.js';
import { ProjectIdSchema } from '../../domain/workspace.js';
import type { Operation } from '../../operations.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ReadModels } from '../../ports/projections.js';
import type { ApiCall, RouteHandler, RouteSpec } from './routeSpec.js';

const timestamp = z.iso.datetime({ offset: true });

export const ProjectionNameParamsSchema = z.object({ name: z.string().min(1).max(100) });
export const RebuildStartedSchema = z.object({ name: z.string(), state: z.literal('rebuilding') });

export const JobsQuerySchema = z.object({
  status: JobStatusSchema.optional(),
  project: ProjectIdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const AdminJobSchema = z.object({
  job_id: z.string(),
  project_id: z.string(),
  status: JobStatusSchema,
  phase: JobPhaseSchema.nullable(),
  percent: z.number().int().min(0).max(100),
  message: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});
export const AdminJobListSchema = z.object({ jobs: z.array(AdminJobSchema) });

/** Administration of the ledger itself: read models, their rebuilds, and indexing jobs across projects. */
export const ADMIN_ROUTE_SPECS = [
  {
    method: 'GET',
    url: '/projections',
    summary: 'Read models: checkpoint, lag, throughput, last error, rebuild progress and quarantined events',
    scope: 'admin',
    rateClass: 'admin',
    status: 200,
    response: ProjectionStatusOutputSchema,
  },
  {
    method: 'POST',
    url: '/projections/{name}/rebuild',
    summary: 'Rebuild a read model beside the live one, then swap it in (409 while one runs)',
    scope: 'admin',
    rateClass: 'admin',
    params: ProjectionNameParamsSchema,
    status: 202,
    response: RebuildStartedSchema,
  },
  {
    method: 'GET',
    url: '/jobs',
    summary: 'Indexing jobs with live progress, newest first',
    scope: 'admin',
    rateClass: 'admin',
    query: JobsQuerySchema,
    status: 200,
    response: AdminJobListSchema,
  },
] as const satisfies readonly RouteSpec[];

/** The one project a tenant's caller may see, or null for the caller of an open deployment. */
const tenantOf = (call: ApiCall): string | null =>
  call.principal && call.principal.method !== 'open' ? call.principal.tenant : null;

export interface AdminDeps {
  projections: () => ProjectionRunner;
  readModels: ReadModels;
  store: EventStore;
  operations: () => readonly Operation[];
}

export const adminHandlers = ({ projections, readModels, store, operations }: AdminDeps) => {
  /** When a job last changed: its stream's last event. */
  const updatedAt = async (job: JobView) => {
    const [last] = await store.readStream(streamId('job', job.jobId), { direction: 'backwards', maxCount: 1 });
    return last?.metadata.occurredAt ?? job.createdAt;
  };

  return {
    'GET /projections': async () => ({ projections: (await projections().status()).map(projectionStatusView) }),
    'POST /projections/{name}/rebuild': ({ params }) => {
      const name = params.name as string;
      // Throws at once for an unknown name or a rebuild already running; the runner records how it ends.
      projections()
        .startRebuild(name)
        .catch(() => undefined);
      return Promise.resolve({ name, state: 'rebuilding' as const });
    },
    'GET /jobs': async (call) => {
      const { query } = call;
      if (!operations().some((o) => o.name === 'list_background_jobs'))
        throw new UnavailableError('Background indexing is not available in this deployment');
      const tenant = tenantOf(call);
      const asked = query.project as string | undefined;
      // A tenant's caller sees its own project only: asking for another one finds nothing.
      if (tenant && asked && asked !== tenant) return { jobs: [] };
      const project = tenant ?? asked;
      const { items } = await readModels.find<JobView>(jobsProjection.name, {
        where: { ...(project ? { project } : {}), ...(query.status ? { status: query.status as string } : {}) },
        orderBy: [{ field: 'createdAt', direction: 'desc' }],
        limit: query.limit as number,
      });
      return {
        jobs: await Promise.all(
          items.map(async (job) => ({
            job_id: job.jobId,
            project_id: job.project,
            status: job.status,
            phase: job.phase,
            percent: job.percentage,
            message: job.message,
            created_at: job.createdAt,
            updated_at: await updatedAt(job),
          })),
        ),
      };
    },
  } satisfies Record<string, RouteHandler>;
};

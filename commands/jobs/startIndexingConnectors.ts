import { z } from 'zod';
import { connectorRoots } from '../../src/services/connectorRoots.js';
import { REMOTE_CONNECTOR_TYPES } from '../../src/domain/connectors.js';
import { CONNECTORS, type ConnectorRow } from '../../src/domain/connectorView.js';
import { ValidationError } from '../../src/errors.js';
import { defineOperation, type OperationContext, type RouteSurfaces } from '../../src/operations.js';
import type { IndexJobs, RequestedJob } from '../../src/ports/indexJobs.js';
import { DuplicateJobError } from '../../src/domain/jobs.js';
import { syncJobPath } from './syncConnector.js';
import type { ReadModels } from '../../src/ports/projections.js';
import type { ReadableRoots } from '../../src/ports/readableRoots.js';

export interface ConnectorIndexingDeps {
  readModels: ReadModels;
  /** The folders connector roots must lie in. */
  readable: ReadableRoots;
  jobs: IndexJobs;
  /** Opens a remote connector's source as a sync would: throws when a setting it needs is missing. */
  checkRemote: (type: string, settings: Record<string, unknown>) => void;
}

const ConnectorNamesSchema = z.array(z.string().min(1).max(200)).max(50);

export const IndexStartResponseSchema = z.object({
  job_id: z.string(),
  job_ids: z.array(z.string()),
  status: z.string(),
  estimated_duration_minutes: z.number().nullable(),
});
type IndexStarted = z.output<typeof IndexStartResponseSchema>;

/** What to index: the local roots of the chosen connectors, and the remote ones, synced as jobs. */
const chosenWork = async (deps: ConnectorIndexingDeps, names: readonly string[] | undefined, context: OperationContext) => {
  const { items } = await deps.readModels.find<ConnectorRow>(CONNECTORS, {
    where: { project: context.project },
    limit: 1000,
  });
  const everything = !names?.length || names.includes('all');
  const chosen = everything
    ? items
    : items.filter((c) => names.includes(c.id) || names.includes(c.name) || names.includes(c.type));
  if (!everything) {
    const unknown = names.filter((n) => !items.some((c) => c.id === n || c.name === n || c.type === n));
    if (unknown.length) throw new ValidationError(`Unknown connectors: ${unknown.join(', ')}`);
  }
  const roots = [...new Set(chosen.flatMap((c) => connectorRoots(c.type, c.settings, deps.readable)))];
  const remote = chosen.filter((c) => REMOTE_CONNECTOR_TYPES.has(c.type));
  if (roots.length === 0 && remote.length === 0)
    throw new ValidationError('No connector to index: add one with POST /connectors');
  for (const connector of remote) deps.checkRemote(connector.type, connector.settings);
  await checkNoneActive(deps, [...roots, ...remote.map((c) => syncJobPath(c.id))], context);
  return { roots, remote };
};

/** A target already being indexed or synced refuses the whole request, before any job starts. */
const checkNoneActive = async (deps: ConnectorIndexingDeps, targets: readonly string[], context: OperationContext) => {
  const active = (
    await Promise.all(ACTIVE_STATUSES.map((status) => deps.jobs.list(context, status)))
  ).flat().filter((job) => targets.includes(job.repo_path));
  if (active.length > 0)
    throw new DuplicateJobError(
      `Already indexing: ${active.map((job) => `${job.repo_path} (job ${job.job_id})`).join(', ')}; nothing was started`,
      { job_ids: active.map((job) => job.job_id), suggestion: 'Follow the jobs with GET /index/status, or stop them first' },
    );
};

const ACTIVE_STATUSES = ['running', 'pending', 'blocked'] as const;

/** Starts a job per local root and per remote connector of those named (all when none or `all`). */
export const indexConnectors = async (
  deps: ConnectorIndexingDeps,
  names: readonly string[] | undefined,
  force: boolean,
  context: OperationContext,
): Promise<IndexStarted> => {
  const { roots, remote } = await chosenWork(deps, names, context);
  const started: RequestedJob[] = [];
  try {
    for (const root of roots) started.push(await deps.jobs.index(root, force, context));
    for (const connector of remote) started.push(await deps.jobs.sync(connector.id, context));
  } catch (error) {
    // One refused after the checks (a job started meanwhile): an error still means nothing runs.
    await Promise.all(started.map((job) => deps.jobs.cancel(job.job_id, context).catch(() => undefined)));
    throw error;
  }
  const seconds = started.reduce(
    (sum, s) => sum + (typeof s.estimated_duration_seconds === 'number' ? s.estimated_duration_seconds : 0),
    0,
  );
  const ids = started.map((s) => String(s.job_id));
  return {
    job_id: ids[0]!,
    job_ids: ids,
    // Accepted: each job runs, or waits for a slot, in the background (GET /index/status follows them).
    status: 'queued',
    estimated_duration_minutes: seconds > 0 ? Math.max(1, Math.round(seconds / 60)) : null,
  };
};

/** Over MCP, `context.index_control` runs these. */
const indexWrite = { tool: false, toolset: 'jobs', writes: true, scope: 'index:write' } as const;

export const startIndexingConnectorsSurfaces = {
  name: 'index.start',
  ...indexWrite,
  input: z
    .object({ connectors: ConnectorNamesSchema.optional(), force_full_reindex: z.boolean().default(false) })
    .strict(),
  output: IndexStartResponseSchema,
  rest: { method: 'POST', path: '/index/start', summary: 'Start indexing', status: 202, rateClass: 'index' },
} as const satisfies RouteSurfaces;

export const forceReindexSurfaces = {
  name: 'index.force_reindex',
  ...indexWrite,
  input: z
    .object({
      confirm_destructive: z.literal(true, { message: 'confirm_destructive must be true to force a full reindex' }),
      connectors: ConnectorNamesSchema.default(['all']),
    })
    .strict(),
  output: z.object({ job_id: z.string(), job_ids: z.array(z.string()), status: z.string(), warning: z.string() }),
  rest: { method: 'POST', path: '/index/force-reindex', summary: 'Force a full reindex', status: 202, rateClass: 'index' },
} as const satisfies RouteSurfaces;

export const startIndexingConnectorsOperation = (deps: ConnectorIndexingDeps) =>
  defineOperation({
    ...startIndexingConnectorsSurfaces,
    title: 'Start indexing',
    description: "Indexes the project's connectors (those named, or all) as background jobs.",
    run: ({ connectors, force_full_reindex: force }, context) => indexConnectors(deps, connectors, force, context),
  });

export const forceReindexOperation = (deps: ConnectorIndexingDeps) =>
  defineOperation({
    ...forceReindexSurfaces,
    title: 'Force a full reindex',
    description: 'Re-reads and re-indexes every file of the named connectors (or all).',
    run: async ({ connectors }, context) => {
      const started = await indexConnectors(deps, connectors, true, context);
      return {
        job_id: started.job_id,
        job_ids: started.job_ids,
        status: started.status,
        warning: 'Every file is re-read and re-indexed; this may take a long time on large connectors',
      };
    },
  });

import { CONNECTORS, type ConnectorRow } from '../../domain/connectorView.js';
import { UnavailableError, ValidationError } from '../../errors.js';
import type { Operation, OperationContext } from '../../operations.js';
import type { ReadModels } from '../../ports/projections.js';
import { REMOTE_CONNECTOR_TYPES } from '../../domain/connectors.js';
import { connectorRoots } from '../../ingestion/readableRoots.js';
import type { ReadableRoots } from '../../ports/readableRoots.js';

interface JobItem {
  job_id: string;
  repo_path: string;
  status: string;
  progress_percentage: number;
  files_indexed: number;
  created_at: string;
  started_at?: string;
  completed_at?: string;
}

export interface IndexControlDeps {
  operations: () => readonly Operation[];
  readModels: ReadModels;
  /** The folders connector roots must lie in. */
  readable: ReadableRoots;
}

/** `/index/*` and `context.index_control` on top of the ledger's background jobs, for the caller's project. */
export const createIndexControl = ({ operations, readModels, readable }: IndexControlDeps) => {
  const run = async (name: string, input: Record<string, unknown>, context: OperationContext) => {
    const operation = operations().find((o) => o.name === name);
    if (!operation) throw new UnavailableError('Background indexing is not available in this deployment');
    // Jobs name their project explicitly: always the caller's own.
    return operation.run({ ...input, project_id: context.project }, context);
  };
  const jobs = async (context: OperationContext, status?: string): Promise<JobItem[]> =>
    ((await run('list_background_jobs', { limit: 200, ...(status ? { status } : {}) }, context))
      .jobs as JobItem[]) ?? [];

  /** What to index: the local roots of the chosen connectors, and the remote ones, synced as jobs. */
  const chosenWork = async (names: readonly string[] | undefined, context: OperationContext) => {
    const { items } = await readModels.find<ConnectorRow>(CONNECTORS, {
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
    const roots = [...new Set(chosen.flatMap((c) => connectorRoots(c.type, c.settings, readable)))];
    const remote = chosen.filter((c) => REMOTE_CONNECTOR_TYPES.has(c.type));
    if (roots.length === 0 && remote.length === 0)
      throw new ValidationError('No connector to index: add one with POST /connectors');
    return { roots, remote };
  };

  const start = async (names: readonly string[] | undefined, force: boolean, context: OperationContext) => {
    const { roots, remote } = await chosenWork(names, context);
    const started = [];
    for (const root of roots)
      started.push(
        await run('start_indexing_background', { repo_path: root, force_reindex: force }, context),
      );
    for (const connector of remote) started.push(await run('connectors.sync', { connector: connector.id }, context));
    const seconds = started.reduce(
      (sum, s) => sum + (typeof s.estimated_duration_seconds === 'number' ? s.estimated_duration_seconds : 0),
      0,
    );
    const ids = started.map((s) => String(s.job_id));
    return {
      job_id: ids[0]!,
      job_ids: ids,
      status: started.every((s) => s.status === 'running') ? 'running' : 'queued',
      estimated_duration_minutes: seconds > 0 ? Math.max(1, Math.round(seconds / 60)) : null,
    };
  };

  return {
    start,
    stop: async (context: OperationContext) => {
      const active = [
        ...(await jobs(context, 'running')),
        ...(await jobs(context, 'pending')),
        ...(await jobs(context, 'blocked')),
      ];
      for (const job of active) await run('cancel_job', { job_id: job.job_id }, context);
      return active.length
        ? {
            status: 'stopping' as const,
            message: 'Indexing will stop gracefully',
            job_ids: active.map((j) => j.job_id),
          }
        : { status: 'idle' as const, message: 'No indexing is running', job_ids: [] };
    },
    status: async (context: OperationContext) => {
      const all = await jobs(context);
      const current = all.find(
        (j) => j.status === 'running' || j.status === 'pending' || j.status === 'blocked',
      );
      const last = all.find((j) => j.status === 'completed');
      const minutes =
        last?.started_at && last.completed_at
          ? (Date.parse(last.completed_at) - Date.parse(last.started_at)) / 60_000
          : null;
      return {
        status: current ? ('running' as const) : ('idle' as const),
        current_job: current
          ? {
              id: current.job_id,
              started_at: current.started_at ?? null,
              progress: {
                completed: current.progress_percentage,
                total: 100,
                current_connector: current.repo_path,
              },
            }
          : null,
        last_completed: last
          ? {
              finished_at: last.completed_at ?? null,
              duration_minutes: minutes === null ? null : Number(minutes.toFixed(2)),
              documents_processed: last.files_indexed,
            }
          : null,
      };
    },
    jobs,
  };
};
export type IndexControl = ReturnType<typeof createIndexControl>;

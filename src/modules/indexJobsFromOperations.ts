import { UnavailableError } from '../errors.js';
import type { Operation, OperationContext } from '../operations.js';
import type { IndexJobItem, IndexJobs, RequestedJob } from '../ports/indexJobs.js';

/** Index control through the jobs module's operations, in the caller's project. */
export const indexJobsFromOperations = (operations: () => readonly Operation[]): IndexJobs => {
  const run = async (name: string, input: Record<string, unknown>, context: OperationContext) => {
    const operation = operations().find((o) => o.name === name);
    if (!operation) throw new UnavailableError('Background indexing is not available in this deployment');
    // Jobs name their project explicitly: always the caller's own.
    return operation.run({ ...input, project_id: context.project }, context);
  };
  return {
    list: async (context, status) =>
      ((await run('list_background_jobs', { limit: 200, ...(status ? { status } : {}) }, context))
        .jobs as IndexJobItem[]) ?? [],
    index: async (root, force, context) =>
      (await run('start_indexing_background', { repo_path: root, force_reindex: force }, context)) as unknown as RequestedJob,
    sync: async (connectorId, context) =>
      (await run('connectors.sync', { connector: connectorId }, context)) as unknown as RequestedJob,
    cancel: async (jobId, context) => {
      await run('cancel_job', { job_id: jobId }, context);
    },
  };
};

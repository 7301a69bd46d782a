import type { JobsApi } from '../module.js';
import { callOperation, type OperationContext } from '../operations.js';
import type { IndexJobs } from '../ports/indexJobs.js';

/** Index control through the jobs feature's operations, in the caller's project, as part of the caller's own operation. */
const ON_BEHALF = { onBehalf: true } as const;

export const indexJobsFromOperations = (jobs: () => JobsApi): IndexJobs => {
  // Jobs name their project explicitly: always the caller's own.
  const project = (context: OperationContext) => ({ project_id: context.project });
  return {
    list: async (context, status) =>
      (await callOperation(jobs().list, { limit: 200, offset: 0, ...(status ? { status } : {}), ...project(context) }, context, ON_BEHALF)).jobs,
    index: (root, force, context) =>
      callOperation(
        jobs().start,
        { repo_path: root, force_reindex: force, include_patterns: [], exclude_patterns: [], ...project(context) },
        context,
        ON_BEHALF,
      ),
    sync: (connectorId, context) => callOperation(jobs().sync, { connector: connectorId }, context, ON_BEHALF),
    cancel: async (jobId, context) => {
      await callOperation(jobs().cancel, { job_id: jobId, ...project(context) }, context, ON_BEHALF);
    },
  };
};

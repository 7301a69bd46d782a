import type { JobsApi } from '../module.js';
import type { OperationContext } from '../operations.js';
import type { IndexJobs } from '../ports/indexJobs.js';

/** Index control through the jobs feature's operations, in the caller's project. */
export const indexJobsFromOperations = (jobs: () => JobsApi): IndexJobs => {
  // Jobs name their project explicitly: always the caller's own.
  const project = (context: OperationContext) => ({ project_id: context.project });
  return {
    list: async (context, status) =>
      (await jobs().list.run({ limit: 200, offset: 0, ...(status ? { status } : {}), ...project(context) }, context)).jobs,
    index: (root, force, context) =>
      jobs().start.run(
        { repo_path: root, force_reindex: force, include_patterns: [], exclude_patterns: [], ...project(context) },
        context,
      ),
    sync: (connectorId, context) => jobs().sync.run({ connector: connectorId }, context),
    cancel: async (jobId, context) => {
      await jobs().cancel.run({ job_id: jobId, ...project(context) }, context);
    },
  };
};

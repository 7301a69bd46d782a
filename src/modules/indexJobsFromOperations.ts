import { UnavailableError } from '../errors.js';
import type { FeatureApis, JobsApi } from '../module.js';
import type { OperationContext } from '../operations.js';
import type { IndexJobs } from '../ports/indexJobs.js';

/** Index control through the jobs feature's operations, in the caller's project. */
export const indexJobsFromOperations = (features: () => FeatureApis): IndexJobs => {
  const jobs = (): JobsApi => {
    const api = features().jobs;
    if (!api) throw new UnavailableError('Background indexing is not available in this deployment');
    return api;
  };
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

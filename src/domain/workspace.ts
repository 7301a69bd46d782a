import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The project (workspace) of callers who name none. */
export const DEFAULT_PROJECT = 'default';

export const ProjectIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, `_`, `.` and `-`, at most 64 characters')
  .describe('Project workspace; `default` when omitted');

/**
 * The workspace name of a project, the job tools' `cb_proj_<slug>_<8 hex>`: the same project always
 * gets the same name, and projects whose slugs collide still differ by the hash of their id.
 */
export const databaseNameOf = (projectId: string): string => {
  const slug =
    projectId
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 40) || 'project';
  const hash = createHash('sha256').update(projectId).digest('hex').slice(0, 8);
  return `cb_proj_${slug}_${hash}`;
};

export const resolveProject = (projectId: string | undefined) => {
  const project = projectId ?? DEFAULT_PROJECT;
  return { project_id: project, database_name: databaseNameOf(project) };
};

import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../errors.js';

/** Settings of local connectors that name a folder to read. */
const ROOT_FIELDS = ['root', 'roots', 'path', 'paths', 'directory', 'repository'] as const;
const LOCAL_TYPES = new Set(['filesystem', 'file', 'git', 'local']);

const inside = (base: string, target: string) => {
  const relative = path.relative(base, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/**
 * A connector root resolved inside `base`: relative, no `..`, and (when it exists) not a symlink
 * that leads out of `base`. Anything else is refused.
 */
export const resolveRoot = (base: string, root: string): string => {
  if (typeof root !== 'string' || root.length === 0 || root.includes('\0'))
    throw new ValidationError('A connector root must be a non-empty path');
  if (path.isAbsolute(root) || /^[A-Za-z]:[\\/]/.test(root) || root.startsWith('\\')) {
    throw new ValidationError(`Connector root '${root}' must be relative to the connectors root`);
  }
  if (root.split(/[\\/]/).includes('..'))
    throw new ValidationError(`Connector root '${root}' must not contain '..'`);
  const realBase = realpathSync(base);
  const resolved = path.resolve(realBase, root);
  if (!inside(realBase, resolved))
    throw new ValidationError(`Connector root '${root}' leads outside the connectors root`);
  if (existsSync(resolved) && !inside(realBase, realpathSync(resolved))) {
    throw new ValidationError(`Connector root '${root}' is a link that leads outside the connectors root`);
  }
  return resolved;
};

/** The folders a local connector reads, each checked; none for other connector types. */
export const connectorRoots = (type: string, settings: Record<string, unknown>, base: string): string[] => {
  if (!LOCAL_TYPES.has(type)) return [];
  const roots: string[] = [];
  for (const field of ROOT_FIELDS) {
    const value = settings[field];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const root of values) {
      if (typeof root !== 'string') throw new ValidationError(`Connector setting '${field}' must hold paths`);
      roots.push(resolveRoot(base, root));
    }
  }
  return roots;
};

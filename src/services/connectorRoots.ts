import { ValidationError } from '../errors.js';
import type { ReadableRoots } from '../ports/readableRoots.js';

/** Settings of local connectors that name a folder to read. */
const ROOT_FIELDS = ['root', 'roots', 'path', 'paths', 'directory', 'repository'] as const;
const LOCAL_TYPES = new Set(['filesystem', 'file', 'git', 'local']);

/**
 * The folders a local connector reads, each checked; none for other connector types. A relative
 * connector root is taken from the first root, so that it names the same folder whichever process
 * reads it.
 */
export const connectorRoots = (type: string, settings: Record<string, unknown>, readable: ReadableRoots): string[] => {
  if (!LOCAL_TYPES.has(type)) return [];
  const roots: string[] = [];
  for (const field of ROOT_FIELDS) {
    const value = settings[field];
    if (value === undefined) continue;
    for (const root of Array.isArray(value) ? value : [value]) {
      if (typeof root !== 'string') throw new ValidationError(`Connector setting '${field}' must hold paths`);
      roots.push(readable.resolve(root, { base: readable.roots[0], field }));
    }
  }
  return roots;
};

import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { ValidationError } from '../errors.js';
import type { ReadableRoots } from '../ports/readableRoots.js';

/** The setting that names the folders ingestion may read, as an operator writes it in `ctx.toml`. */
export const ROOTS_SETTING = 'ingest.roots';

const inside = (base: string, target: string) => {
  const relative = path.relative(base, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/**
 * The real path of `target`, or of its nearest existing ancestor with the rest appended, so that a
 * link on the way out is seen even when the end of the path does not exist (yet).
 */
const realPathOf = (target: string): string => {
  const rest: string[] = [];
  let current = target;
  for (;;) {
    try {
      return path.join(realpathSync(current), ...rest);
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return target;
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
};

export const readableRoots = (roots: readonly string[], cwd = process.cwd()): ReadableRoots => {
  const absolute = roots.map((root) => path.resolve(cwd, root));
  const refuse = (message: string, given: string, field: string) =>
    new ValidationError(message, {
      field,
      value: given,
      setting: ROOTS_SETTING,
      suggestion: `Give a path inside the folders ingestion may read, or add its folder to the server's ${ROOTS_SETTING} setting`,
    });
  return {
    roots: absolute,
    resolve: (given, { base = cwd, field = 'path' } = {}) => {
      if (typeof given !== 'string' || given.length === 0 || given.includes('\0'))
        throw refuse(`The ${field} must be a non-empty path`, String(given), field);
      const resolved = path.resolve(base, given);
      if (!absolute.some((root) => inside(root, resolved)))
        throw refuse(`Path '${given}' is outside the folders ingestion may read (setting ${ROOTS_SETTING})`, given, field);
      const real = realPathOf(resolved);
      if (!absolute.some((root) => inside(realPathOf(root), real)))
        throw refuse(
          `Path '${given}' leads through a link outside the folders ingestion may read (setting ${ROOTS_SETTING})`,
          given,
          field,
        );
      return resolved;
    },
  };
};

/**
 * The deployment's roots: `ingest.roots`, or the older one-folder `api.connectors_root`, or else the
 * working directory. Relative roots are taken from the working directory.
 */
export const readableRootsOf = (config: Pick<Config, 'ingest' | 'api'>, cwd = process.cwd()): ReadableRoots =>
  readableRoots(config.ingest.roots ?? (config.api.connectorsRoot ? [config.api.connectorsRoot] : [cwd]), cwd);

export { connectorRoots } from '../domain/connectorRequests.js';

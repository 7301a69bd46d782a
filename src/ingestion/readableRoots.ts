import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
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

/**
 * How an operator lets ingestion read a path: the setting in ctx.toml or the environment (both
 * replace the list, so the folders already allowed stay in it), or starting ctx inside its folder.
 * Nothing is looked up on disk, and a relative path is not resolved: the answer shows a client
 * nothing of the server's folders it did not name itself.
 */
const howToAllow = (what: string) =>
  `To allow it, add ${what} (or a folder above it) to roots ` +
  'under [ingest] in ctx.toml, keeping the folders already there (unset, it is the working directory, ' +
  'unless that is / or the home folder), ' +
  'or set CTX_INGEST__ROOTS to the folders, comma-separated; or run ctx from a folder that holds it';

/**
 * `roots` resolved against `cwd`; `noRootsBecause` says why there are none (see readableRootsOf), and
 * every path is then refused with it.
 */
export const readableRoots = (roots: readonly string[], cwd = process.cwd(), noRootsBecause?: string): ReadableRoots => {
  const absolute = roots.map((root) => path.resolve(cwd, root));
  const refuse = (message: string, given: string, field: string, suggestion: string) =>
    new ValidationError(message, { field, value: given, setting: ROOTS_SETTING, suggestion });
  const outside = (problem: string, given: string, field: string, what: string) => {
    const fix = howToAllow(what);
    const why = absolute.length === 0 && noRootsBecause ? `: ${noRootsBecause}` : '';
    return refuse(`Path '${given}' ${problem} the folders ingestion may read (setting ${ROOTS_SETTING})${why}. ${fix}.`, given, field, fix);
  };
  return {
    roots: absolute,
    resolve: (given, { base = cwd, field = 'path' } = {}) => {
      if (typeof given !== 'string' || given.length === 0 || given.includes('\0'))
        throw refuse(`The ${field} must be a non-empty path`, String(given), field, 'Give a path to read');
      const resolved = path.resolve(base, given);
      if (!absolute.some((root) => inside(root, resolved)))
        throw outside('is outside', given, field, path.isAbsolute(given) ? `'${given}'` : 'its absolute path');
      const real = realPathOf(resolved);
      if (!absolute.some((root) => inside(realPathOf(root), real)))
        throw outside('leads through a link outside', given, field, 'the folder the link leads to');
      return resolved;
    },
  };
};

/**
 * What a working directory is when it is too broad to read unless named: the filesystem's root, or
 * the home folder or one above it, where a desktop client often starts `ctx mcp`. Read by default,
 * it would let any agent connected have the user's keys (`~/.ssh`, `~/.aws`) ingested and searched.
 */
const tooBroadToRead = (cwd: string): string | undefined => {
  const real = realPathOf(path.resolve(cwd));
  if (path.dirname(real) === real) return "the filesystem's root";
  const home = realPathOf(homedir());
  if (real === home) return 'the home folder';
  return inside(real, home) ? 'a folder above the home folder' : undefined;
};

/**
 * The deployment's roots: `ingest.roots`, or the older one-folder `api.connectors_root`, or else the
 * working directory, unless that is too broad to read unless named (then none). Relative roots are
 * taken from the working directory.
 */
export const readableRootsOf = (config: Pick<Config, 'ingest' | 'api'>, cwd = process.cwd()): ReadableRoots => {
  const configured = config.ingest.roots ?? (config.api.connectorsRoot ? [config.api.connectorsRoot] : undefined);
  if (configured) return readableRoots(configured, cwd);
  const broad = tooBroadToRead(cwd);
  if (!broad) return readableRoots([cwd], cwd);
  return readableRoots([], cwd, `it is unset, and ctx runs from ${cwd}, ${broad}, which is not read unless named`);
};

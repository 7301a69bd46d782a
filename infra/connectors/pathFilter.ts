import picomatch from 'picomatch';
import { DEFAULT_EXCLUDES } from './types.js';

export interface PathFilterOptions {
  /** Globs a file's source id must match; everything when absent or empty. */
  readonly include?: readonly string[];
  /** Globs that exclude files and whole directories; `DEFAULT_EXCLUDES` when absent. */
  readonly exclude?: readonly string[];
}

export interface PathFilter {
  /** True when nothing under the directory can be scanned, so the walk need not enter it. */
  excludesDirectory(relativePath: string): boolean;
  /** Null when the file is admitted, otherwise the reason it is not. */
  rejectionOf(relativePath: string): string | null;
}

const NOTHING = (): boolean => false;

export const createPathFilter = (options: PathFilterOptions): PathFilter => {
  const excludes = options.exclude ?? DEFAULT_EXCLUDES;
  const includes = options.include ?? [];
  const isExcluded = excludes.length > 0 ? picomatch([...excludes], { dot: true }) : NOTHING;
  const isIncluded = includes.length > 0 ? picomatch([...includes], { dot: true }) : () => true;
  return {
    excludesDirectory: (relativePath) => isExcluded(relativePath) || isExcluded(`${relativePath}/`),
    rejectionOf: (relativePath) => {
      if (isExcluded(relativePath)) return 'matches an exclude pattern';
      if (!isIncluded(relativePath)) return 'matches no include pattern';
      return null;
    },
  };
};

/** Why a connector passed over a file instead of yielding its content. */
export type SkipReason =
  | 'binary'
  | 'too_large'
  | 'unreadable'
  | 'vanished'
  | 'excluded'
  /** A symbolic link whose target lies outside the scanned root. */
  | 'outside_root';

export interface ScannedFile {
  readonly status: 'scanned';
  /** The root (or repository) the file was found under, as an absolute path. */
  readonly root: string;
  /** The path relative to its root, with forward slashes: stable across machines. */
  readonly sourceId: string;
  readonly absolutePath: string;
  readonly body: string;
  readonly bytes: number;
  readonly modifiedAt: string;
  readonly contentType: string;
}

export interface SkippedFile {
  readonly status: 'skipped';
  readonly root: string;
  readonly sourceId: string;
  readonly absolutePath: string;
  readonly reason: SkipReason;
  /** A human-readable precision: the rule that excluded the file, the size, the system error. */
  readonly detail: string | null;
}

/** A file as committed in a git repository. `modifiedAt` equals `updatedAt`, the time of its last commit. */
export interface GitFile extends ScannedFile {
  /** The commit the files were read from. */
  readonly commit: string;
  readonly author: string | null;
  readonly updatedAt: string;
  readonly sourceUrl: string | null;
}

/** Directories every scan skips unless the caller passes its own `exclude` list. */
export const DEFAULT_EXCLUDES: readonly string[] = ['**/node_modules/**'];

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

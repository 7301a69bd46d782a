import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ValidationError } from '../../src/errors.js';
import { detectContentType } from '../chunking/contentTypes.js';
import { decodeText, looksBinary } from './fileContent.js';
import { GitCommandError, runGit } from './gitCli.js';
import { lastChanges, listTree, readBlobs, type LastChange, type TreeEntry } from './gitObjects.js';
import { createPathFilter, type PathFilter } from './pathFilter.js';
import { secretFileByContent, secretFileByName } from './secretFiles.js';
import { DEFAULT_MAX_FILE_BYTES, type GitFile, type SkippedFile, type SkipReason } from './types.js';

export interface GitScanOptions {
  /** A local working copy or bare repository. */
  readonly repository: string;
  /** The revision to read (default `HEAD`). */
  readonly ref?: string;
  /** Globs over repository paths; every file when absent. */
  readonly include?: readonly string[];
  /** Globs over repository paths; `DEFAULT_EXCLUDES` when absent, `[]` to exclude nothing. */
  readonly exclude?: readonly string[];
  readonly maxFileBytes?: number;
  /**
   * How to link to a file, e.g. `https://git.example.com/org/repo/blob/{commit}/{path}`.
   * Placeholders: `{commit}`, `{branch}` (the commit when no branch is known), `{path}` (URL-encoded
   * per segment). No links when absent.
   */
  readonly sourceUrlTemplate?: string;
  /** The branch name for `{branch}`; by default the branch `ref` names, or HEAD's current branch. */
  readonly branch?: string;
}

interface Scan {
  readonly repository: string;
  readonly commit: string;
  readonly branch: string | null;
  readonly committedAt: string;
  readonly options: GitScanOptions;
}

/**
 * Yields every file of the commit `ref` points at, as committed (not as in the working tree), with
 * its last commit's author and time. Same skip rules as the filesystem scanner: binary, too large
 * and excluded files are yielded as skipped; files under excluded directories are not yielded;
 * submodules and symbolic links are skipped as excluded.
 * @throws ValidationError when the path is not a git repository or `ref` names no commit.
 */
export async function* scanGitRepository(options: GitScanOptions): AsyncGenerator<GitFile | SkippedFile> {
  const repository = resolve(options.repository);
  const ref = options.ref ?? 'HEAD';
  await assertDirectory(repository, options.repository);
  const commit = await resolveCommit(repository, ref);
  const scan: Scan = {
    repository,
    commit,
    branch: options.branch ?? (await branchOf(repository, ref)),
    committedAt: (await runGit(repository, ['show', '-s', '--format=%aI', commit])).trim(),
    options,
  };
  const filter = createPathFilter(options);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;

  const toRead: TreeEntry[] = [];
  const verdicts = new Map<string, SkippedFile | 'read'>();
  for (const entry of await listTree(repository, commit)) {
    if (isInExcludedDirectory(filter, entry.path)) continue;
    const skip = skipReasonOf(entry, filter, maxFileBytes);
    if (skip) verdicts.set(entry.path, skipped(scan, entry.path, skip.reason, skip.detail));
    else {
      verdicts.set(entry.path, 'read');
      toRead.push(entry);
    }
  }

  const changes = await lastChanges(repository, commit, new Set(toRead.map((entry) => entry.path)));
  const blobs = readBlobs(
    repository,
    toRead.map((entry) => entry.objectId),
  );
  try {
    let next = 0;
    for (const [path, verdict] of verdicts) {
      if (verdict !== 'read') {
        yield verdict;
        continue;
      }
      const entry = toRead[next++];
      const blob = await blobs.next();
      if (!entry) break;
      yield blob.done === true
        ? skipped(scan, path, 'unreadable', 'git cat-file ended early')
        : fileOf(scan, entry, blob.value.content, changes.get(path) ?? null, maxFileBytes);
    }
  } finally {
    await blobs.return(undefined);
  }
}

const fileOf = (
  scan: Scan,
  entry: TreeEntry,
  content: Buffer | null,
  change: LastChange | null,
  maxFileBytes: number,
): GitFile | SkippedFile => {
  if (!content) return skipped(scan, entry.path, 'vanished', `object ${entry.objectId} is missing`);
  if (content.length > maxFileBytes) return skipped(scan, entry.path, 'too_large', `${content.length} bytes`);
  if (looksBinary(content)) return skipped(scan, entry.path, 'binary', null);
  const body = decodeText(content);
  const secret = secretFileByContent(body);
  if (secret) return skipped(scan, entry.path, 'excluded', secret);
  // Only a shallow clone can lack a file's last change; the scanned commit's time is the best guess.
  const updatedAt = change?.authoredAt ?? scan.committedAt;
  return {
    status: 'scanned',
    root: scan.repository,
    sourceId: entry.path,
    absolutePath: join(scan.repository, entry.path),
    body,
    bytes: content.length,
    modifiedAt: updatedAt,
    contentType: detectContentType(entry.path),
    commit: scan.commit,
    author: change?.author ?? null,
    updatedAt,
    // Linked at the file's own last commit: a commit elsewhere in the repository leaves it unchanged.
    sourceUrl: sourceUrlOf(scan, entry.path, change?.commit ?? scan.commit),
  };
};

const skipReasonOf = (
  entry: TreeEntry,
  filter: PathFilter,
  maxFileBytes: number,
): { reason: SkipReason; detail: string } | null => {
  if (entry.type === 'commit') return { reason: 'excluded', detail: 'submodule' };
  if (entry.mode === '120000') return { reason: 'excluded', detail: 'symbolic link' };
  const secret = secretFileByName(entry.path);
  if (secret) return { reason: 'excluded', detail: secret };
  const rejection = filter.rejectionOf(entry.path);
  if (rejection) return { reason: 'excluded', detail: rejection };
  if (entry.size !== null && entry.size > maxFileBytes) {
    return { reason: 'too_large', detail: `${entry.size} bytes, limit ${maxFileBytes}` };
  }
  return null;
};

const isInExcludedDirectory = (filter: PathFilter, path: string): boolean => {
  for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
    if (filter.excludesDirectory(path.slice(0, slash))) return true;
  }
  return false;
};

/** Fills the URL template; `{path}` is encoded segment by segment so its slashes survive. */
export const sourceUrlFor = (
  template: string,
  values: { commit: string; branch: string | null; path: string },
) =>
  template
    .replaceAll('{commit}', values.commit)
    .replaceAll('{branch}', encodeURIComponent(values.branch ?? values.commit))
    .replaceAll('{path}', values.path.split('/').map(encodeURIComponent).join('/'));

const sourceUrlOf = (scan: Scan, path: string, commit: string): string | null =>
  scan.options.sourceUrlTemplate
    ? sourceUrlFor(scan.options.sourceUrlTemplate, { commit, branch: scan.branch, path })
    : null;

const skipped = (scan: Scan, path: string, reason: SkipReason, detail: string | null): SkippedFile => ({
  status: 'skipped',
  root: scan.repository,
  sourceId: path,
  absolutePath: join(scan.repository, path),
  reason,
  detail,
});

const assertDirectory = async (repository: string, given: string): Promise<void> => {
  const stats = await stat(repository).catch(() => null);
  if (!stats?.isDirectory())
    throw new ValidationError(`Repository '${given}' does not exist`, { repository: given });
};

const resolveCommit = async (repository: string, ref: string): Promise<string> => {
  try {
    return (
      await runGit(repository, ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`])
    ).trim();
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    throw new ValidationError(
      `'${repository}' is not a git repository with a commit at '${ref}'`,
      { repository, ref },
      { cause: error },
    );
  }
};

const branchOf = async (repository: string, ref: string): Promise<string | null> => {
  try {
    if (ref === 'HEAD')
      return (await runGit(repository, ['symbolic-ref', '--short', '-q', 'HEAD'])).trim() || null;
    const branch = ref.replace(/^refs\/heads\//, '');
    await runGit(repository, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`]);
    return branch;
  } catch {
    return null;
  }
};

import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ValidationError } from '../../src/errors.js';
import { isDataDirMarker } from '../dataDirMarker.js';
import { detectContentType } from '../chunking/contentTypes.js';
import { decodeText, looksBinary } from './fileContent.js';
import { isInsideRoot, readInsideRoot } from './readInsideRoot.js';
import { GitignoreRules } from './gitignoreRules.js';
import { secretFileByContent, secretFileByName } from './secretFiles.js';
import { createPathFilter, type PathFilter } from './pathFilter.js';
import { DEFAULT_MAX_FILE_BYTES, type ScannedFile, type SkippedFile, type SkipReason } from './types.js';

export interface FilesystemScanOptions {
  readonly roots: readonly string[];
  /** Globs over source ids (paths relative to their root); every file when absent. */
  readonly include?: readonly string[];
  /** Globs over source ids; `DEFAULT_EXCLUDES` (node_modules) when absent, `[]` to exclude nothing. */
  readonly exclude?: readonly string[];
  readonly maxFileBytes?: number;
  /** Honour .gitignore files found under each root (default true). */
  readonly respectGitignore?: boolean;
}

interface Walk {
  readonly root: string;
  readonly realRoot: string;
  readonly filter: PathFilter;
  readonly maxFileBytes: number;
  readonly respectGitignore: boolean;
  /** Real paths of directories already entered, so symbolic links cannot make the walk loop. */
  readonly visited: Set<string>;
}

/**
 * Walks each root in path order and yields every file as scanned or skipped. It never throws for
 * one bad file: unreadable and vanished files are yielded as skipped. Excluded and gitignored
 * directories are not entered (their files are not yielded at all); `.git` is never entered, nor a
 * data directory of the ledger (yielded as one skipped entry; see infra/dataDirMarker.ts); files
 * holding secrets are skipped whatever the options (see secretFiles.ts).
 * Symbolic links are followed only when their target lies inside the root.
 * @throws ValidationError when a root does not exist or is not a directory.
 */
export async function* scanFilesystem(
  options: FilesystemScanOptions,
): AsyncGenerator<ScannedFile | SkippedFile> {
  const roots = await Promise.all(options.roots.map(resolveRoot));
  const filter = createPathFilter(options);
  for (const { root, realRoot } of roots) {
    const walk: Walk = {
      root,
      realRoot,
      filter,
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      respectGitignore: options.respectGitignore ?? true,
      visited: new Set([realRoot]),
    };
    yield* walkDirectory(walk, root, '', GitignoreRules.none);
  }
}

const resolveRoot = async (path: string): Promise<{ root: string; realRoot: string }> => {
  const root = resolve(path);
  let stats: Stats;
  try {
    stats = await stat(root);
  } catch (error) {
    throw new ValidationError(
      `Root '${path}' does not exist or cannot be read`,
      { root: path },
      { cause: error },
    );
  }
  if (!stats.isDirectory()) throw new ValidationError(`Root '${path}' is not a directory`, { root: path });
  return { root, realRoot: await realpath(root) };
};

async function* walkDirectory(
  walk: Walk,
  directory: string,
  relativeDirectory: string,
  inheritedRules: GitignoreRules,
): AsyncGenerator<ScannedFile | SkippedFile> {
  let entries: Dirent[];
  try {
    entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) =>
      compareNames(a.name, b.name),
    );
  } catch (error) {
    yield skipped(walk, directory, relativeDirectory, reasonOf(error), describeError(error));
    return;
  }
  const gitignore = await gitignoreOf(walk, directory, entries);
  // The ledger's keys and database, its own or another's: never read, whatever the options.
  if (gitignore !== null && isDataDirMarker(gitignore)) {
    yield skipped(
      walk,
      directory,
      relativeDirectory || '.',
      'excluded',
      'a Context Ledger data directory (its database and keys)',
    );
    return;
  }
  const rules =
    walk.respectGitignore && gitignore !== null
      ? inheritedRules.withFile(relativeDirectory, gitignore)
      : inheritedRules;

  for (const entry of entries) {
    if (entry.name === '.git') continue;
    const absolutePath = join(directory, entry.name);
    const sourceId = relativeDirectory === '' ? entry.name : `${relativeDirectory}/${entry.name}`;
    if (await isNotUtf8Name(entry.name, absolutePath)) {
      yield skipped(walk, absolutePath, sourceId, 'unreadable', 'its name is not UTF-8: rename it (convmv converts names) to read it');
      continue;
    }
    const target = await resolveEntry(walk, entry, absolutePath);
    if ('reason' in target) {
      yield skipped(walk, absolutePath, sourceId, target.reason, target.detail);
      continue;
    }
    if (target.type === 'directory') {
      if (walk.filter.excludesDirectory(sourceId) || rules.ignores(sourceId, true)) continue;
      if (walk.visited.has(target.realPath)) continue;
      walk.visited.add(target.realPath);
      yield* walkDirectory(walk, absolutePath, sourceId, rules);
    } else if (target.type === 'file') {
      const secret = secretFileByName(sourceId);
      if (secret) {
        yield skipped(walk, absolutePath, sourceId, 'excluded', secret);
        continue;
      }
      if (rules.ignores(sourceId, false)) {
        yield skipped(walk, absolutePath, sourceId, 'excluded', 'ignored by .gitignore');
        continue;
      }
      const rejection = walk.filter.rejectionOf(sourceId);
      if (rejection) yield skipped(walk, absolutePath, sourceId, 'excluded', rejection);
      else yield await readEntry(walk, absolutePath, target.realPath, sourceId);
    } else {
      yield skipped(walk, absolutePath, sourceId, 'excluded', 'not a regular file');
    }
  }
}

/** A name that is not UTF-8 reads back with U+FFFD in its place, and nothing is found by it. */
const isNotUtf8Name = async (name: string, absolutePath: string) =>
  name.includes('\ufffd') &&
  (await lstat(absolutePath).then(
    () => false,
    () => true,
  ));

/** The directory's own `.gitignore`, when it has a readable one. */
const gitignoreOf = async (
  walk: Walk,
  directory: string,
  entries: readonly Dirent[],
): Promise<string | null> => {
  if (!entries.some((entry) => entry.name === '.gitignore' && entry.isFile())) return null;
  try {
    const read = await readInsideRoot(join(directory, '.gitignore'), walk.realRoot, walk.maxFileBytes);
    return 'content' in read ? read.content.toString('utf8') : null;
  } catch {
    return null;
  }
};

type EntryTarget =
  | { readonly type: 'file' | 'directory' | 'other'; readonly realPath: string }
  | { readonly reason: SkipReason; readonly detail: string };

const resolveEntry = async (walk: Walk, entry: Dirent, absolutePath: string): Promise<EntryTarget> => {
  if (!entry.isSymbolicLink()) {
    const type = entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other';
    return { type, realPath: absolutePath };
  }
  try {
    const realPath = await realpath(absolutePath);
    if (!isInsideRoot(walk.realRoot, realPath)) {
      return { reason: 'outside_root', detail: 'symbolic link to a path outside the root' };
    }
    const stats = await stat(realPath);
    return { type: stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other', realPath };
  } catch (error) {
    return { reason: 'unreadable', detail: `broken symbolic link: ${describeError(error)}` };
  }
};

const readEntry = async (
  walk: Walk,
  absolutePath: string,
  realPath: string,
  sourceId: string,
): Promise<ScannedFile | SkippedFile> => {
  try {
    const read = await readInsideRoot(realPath, walk.realRoot, walk.maxFileBytes);
    if ('reason' in read) return skipped(walk, absolutePath, sourceId, read.reason, read.detail);
    const { content, stats } = read;
    if (looksBinary(content)) return skipped(walk, absolutePath, sourceId, 'binary', null);
    const body = decodeText(content);
    const secret = secretFileByContent(body);
    if (secret) return skipped(walk, absolutePath, sourceId, 'excluded', secret);
    return {
      status: 'scanned',
      root: walk.root,
      sourceId,
      absolutePath,
      body,
      bytes: content.length,
      modifiedAt: stats.mtime.toISOString(),
      contentType: detectContentType(sourceId),
    };
  } catch (error) {
    return skipped(walk, absolutePath, sourceId, reasonOf(error), describeError(error));
  }
};

const skipped = (
  walk: Walk,
  absolutePath: string,
  sourceId: string,
  reason: SkipReason,
  detail: string | null,
): SkippedFile => ({ status: 'skipped', root: walk.root, sourceId, absolutePath, reason, detail });

const reasonOf = (error: unknown): SkipReason =>
  (error as NodeJS.ErrnoException | null)?.code === 'ENOENT' ? 'vanished' : 'unreadable';

const describeError = (error: unknown): string =>
  (error as NodeJS.ErrnoException | null)?.code ?? (error instanceof Error ? error.message : String(error));

/** Code-point order, not locale order, so every machine walks a tree the same way. */
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

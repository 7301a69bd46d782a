import { once } from 'node:events';
import { runGit, spawnGit } from './gitCli.js';

export interface TreeEntry {
  readonly mode: string;
  readonly type: 'blob' | 'commit' | 'tree';
  readonly objectId: string;
  /** Null for submodules, which have no size. */
  readonly size: number | null;
  readonly path: string;
}

/** Every entry of a commit's tree, recursively, in path order. */
export const listTree = async (repository: string, commit: string): Promise<TreeEntry[]> => {
  const output = await runGit(repository, ['ls-tree', '-r', '-z', '--long', '--full-tree', commit]);
  return output
    .split('\0')
    .filter((record) => record !== '')
    .map((record) => {
      const tab = record.indexOf('\t');
      const [mode = '', type = '', objectId = '', size = '-'] = record.slice(0, tab).split(/ +/);
      return {
        mode,
        type: type as TreeEntry['type'],
        objectId,
        size: size === '-' ? null : Number(size),
        path: record.slice(tab + 1),
      };
    });
};

export interface LastChange {
  /** The last commit that changed the file. */
  readonly commit: string;
  readonly authoredAt: string;
  readonly author: string;
}

const RECORD = '\x1e';
const FIELD = '\x1f';

/**
 * The newest commit (reachable from `commit`) touching each wanted path, in one `git log` pass that
 * stops as soon as every path is found. Merge commits list no paths, so a change is credited to the
 * commit that made it rather than to the merge.
 */
export const lastChanges = async (
  repository: string,
  commit: string,
  wanted: ReadonlySet<string>,
): Promise<Map<string, LastChange>> => {
  const found = new Map<string, LastChange>();
  if (wanted.size === 0) return found;
  const git = spawnGit(repository, [
    'log',
    '-z',
    '--name-only',
    '--no-renames',
    `--format=${RECORD}%H${FIELD}%aI${FIELD}%an`,
    commit,
  ]);
  git.stdin.end();
  const take = (record: string): void => {
    const headerEnd = record.indexOf('\0');
    const [commit = '', authoredAt = '', author = ''] = (headerEnd < 0 ? record : record.slice(0, headerEnd)).split(FIELD);
    if (headerEnd < 0) return;
    for (const raw of record.slice(headerEnd + 1).split('\0')) {
      const path = raw.replace(/^\n/, '');
      if (wanted.has(path) && !found.has(path)) found.set(path, { commit, authoredAt, author });
    }
  };
  let pending = '';
  try {
    for await (const chunk of git.stdout.setEncoding('utf8') as AsyncIterable<string>) {
      pending += chunk;
      const records = pending.split(RECORD);
      pending = records.pop() ?? '';
      records.forEach(take);
      if (found.size === wanted.size) return found;
    }
    take(pending);
    return found;
  } finally {
    git.kill();
  }
};

/**
 * Streams blob contents through one `git cat-file --batch` process, in request order; a missing
 * object yields null.
 */
export async function* readBlobs(
  repository: string,
  objectIds: readonly string[],
): AsyncGenerator<{ objectId: string; content: Buffer | null }> {
  if (objectIds.length === 0) return;
  const git = spawnGit(repository, ['cat-file', '--batch']);
  const exited = once(git, 'close');
  git.stdin.on('error', () => undefined);
  git.stdin.end(objectIds.map((id) => `${id}\n`).join(''));
  let buffer: Buffer = Buffer.alloc(0);
  let remaining = objectIds.length;
  try {
    for await (const chunk of git.stdout as AsyncIterable<Buffer>) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        const headerEnd = buffer.indexOf(0x0a);
        if (headerEnd < 0) break;
        const [objectId = '', type = '', size = ''] = buffer
          .subarray(0, headerEnd)
          .toString('utf8')
          .split(' ');
        if (type === 'missing') {
          buffer = buffer.subarray(headerEnd + 1);
          remaining--;
          yield { objectId, content: null };
          continue;
        }
        const length = Number(size);
        if (buffer.length < headerEnd + 1 + length + 1) break;
        const content = Buffer.from(buffer.subarray(headerEnd + 1, headerEnd + 1 + length));
        buffer = buffer.subarray(headerEnd + 1 + length + 1);
        remaining--;
        yield { objectId, content };
      }
      if (remaining === 0) break;
    }
  } finally {
    git.kill();
    await exited;
  }
}

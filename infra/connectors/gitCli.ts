import { execFile, spawn } from 'node:child_process';
import { UnavailableError } from '../../src/errors.js';

const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' };

export class GitCommandError extends Error {
  override name = 'GitCommandError';
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    options?: { cause?: unknown },
  ) {
    super(`git ${args.join(' ')} failed: ${stderr.trim() || 'unknown error'}`, options);
  }
}

/** Runs git in `repository` and returns its stdout. Large outputs (ls-tree of a big tree) are allowed. */
export const runGit = (repository: string, args: readonly string[]): Promise<string> =>
  new Promise((resolvePromise, reject) => {
    execFile(
      'git',
      ['-C', repository, ...args],
      { env: GIT_ENV, maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) resolvePromise(stdout);
        else if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(
            new UnavailableError('The git executable is not installed or not on PATH', { cause: error }),
          );
        } else reject(new GitCommandError(args, stderr, { cause: error }));
      },
    );
  });

/** Starts a long-running git process whose stdout is consumed as a stream. */
export const spawnGit = (repository: string, args: readonly string[]) =>
  spawn('git', ['-C', repository, ...args], { env: GIT_ENV, stdio: ['pipe', 'pipe', 'ignore'] });

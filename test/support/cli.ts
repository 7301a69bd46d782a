import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ENTRY = path.join(ROOT, 'src/cli/ctx.ts');
/** Resolved here, so that `ctx` can run in any working directory. */
const TSX = import.meta.resolve('tsx');

export interface CtxOptions {
  /** The working directory; the repository root by default. */
  cwd?: string;
  /** What `runCtx` writes to the program's standard input; nothing by default. */
  input?: string | Buffer;
}

/** The real `ctx` program, run from source so tests never see a stale build. */
export const ctxCommand = (args: readonly string[], { cwd = ROOT }: CtxOptions = {}) => ({
  command: process.execPath,
  args: ['--import', TSX, ENTRY, ...args],
  cwd,
});

export const spawnCtx = (args: readonly string[], env: NodeJS.ProcessEnv = {}, options: CtxOptions = {}): ChildProcess => {
  const { command, args: full, cwd } = ctxCommand(args, options);
  return spawn(command, full, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
};

export const runCtx = (
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: CtxOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnCtx(args, env, options);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end(options.input);
  });

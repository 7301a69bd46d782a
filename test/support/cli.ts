import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ENTRY = path.join(ROOT, 'src/cli/ctx.ts');

/** The real `ctx` program, run from source so tests never see a stale build. */
export const ctxCommand = (args: readonly string[]) => ({
  command: process.execPath,
  args: ['--import', 'tsx', ENTRY, ...args],
  cwd: ROOT,
});

export const spawnCtx = (args: readonly string[], env: NodeJS.ProcessEnv = {}): ChildProcess => {
  const { command, args: full, cwd } = ctxCommand(args);
  return spawn(command, full, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
};

export const runCtx = (
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnCtx(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end();
  });

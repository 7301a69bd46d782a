import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The program as users run it: the bin script over the compiled dist/. */
export const BIN = path.join(ROOT, 'bin/ctx.js');
const BUILT = path.join(ROOT, 'dist/src/cli/ctx.js');
const SOURCES = ['src', 'commands', 'projections', 'queries', 'infra'];

const newestSource = (dir: string): number => {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
};

const isStale = (): boolean =>
  !existsSync(BUILT) ||
  Math.max(...SOURCES.map((dir) => newestSource(path.join(ROOT, dir)))) > statSync(BUILT).mtimeMs;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Compiles dist/ when it is missing or older than a source file (`npm ci` builds it through
 * `prepare`, so in CI this only checks). Spec files in parallel workers build it once: the first
 * takes the lock, the others wait for it to go.
 */
export const ensureBuilt = async (): Promise<void> => {
  // In the run's own temporary folder (see tempRoot.ts): a run that dies building leaves no lock to the next.
  const lock = path.join(tmpdir(), 'ctx-dist-build.lock');
  for (;;) {
    if (!isStale()) return;
    try {
      mkdirSync(lock);
    } catch {
      await sleep(500);
      continue;
    }
    try {
      if (isStale())
        execFileSync(
          process.execPath,
          [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
          { cwd: ROOT, stdio: 'inherit' },
        );
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
    return;
  }
};

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export const spawnBuilt = (
  args: readonly string[],
  { env = {}, cwd = ROOT }: RunOptions = {},
): ChildProcess =>
  spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });

/** Output collected until the process exits. */
export const finished = (child: ChildProcess): Promise<Run> =>
  new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

/** Runs the built `ctx` to its end, with nothing on stdin. */
export const runBuilt = (args: readonly string[], options: RunOptions = {}): Promise<Run> => {
  const child = spawnBuilt(args, options);
  child.stdin?.end();
  return finished(child);
};

export interface ServedCli {
  url: string;
  child: ChildProcess;
  exited: () => boolean;
  /** What it has printed so far, both streams. */
  output: () => string;
}

const served: ServedCli[] = [];

/** The built `ctx serve` with `args` (a data directory, a free port), once it has said where it serves. */
export const serveBuilt = async (args: readonly string[], options: RunOptions = {}): Promise<ServedCli> => {
  const child = spawnBuilt(['serve', ...args], options);
  let exited = false;
  let output = '';
  child.on('exit', () => (exited = true));
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving on (http:\/\/[\d.:]+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => reject(new Error(`ctx serve exited with ${code}: ${output}`)));
  });
  const server = { url, child, exited: () => exited, output: () => output };
  served.push(server);
  return server;
};

/** Kills every server `serveBuilt` started that is still running (for a spec's afterAll). */
export const killServed = () => {
  for (const server of served.splice(0)) if (!server.exited()) server.child.kill('SIGKILL');
};

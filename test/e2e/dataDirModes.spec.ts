import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxCommand } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';

const SLOW = { timeout: 300_000 };
const ENV = { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'none', ...tempRootsEnv() };

/** `ctx` as a shell with the common umask 022 starts it. */
const ctxUnderUmask022 = (args: string[]) => {
  const { command, args: full, cwd } = ctxCommand(args);
  return spawn('/bin/sh', ['-c', 'umask 022 && exec "$@"', 'sh', command, ...full], { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
};

const exitOf = (child: ReturnType<typeof spawn>) => {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
};

/** Every path under `dir` (itself included) that a group or other user can read, write or enter. */
const openToOthers = (dir: string): string[] => {
  const stats = lstatSync(dir);
  const own = (stats.mode & 0o077) !== 0 && !stats.isSymbolicLink() ? [`${dir} ${(stats.mode & 0o777).toString(8)}`] : [];
  if (!stats.isDirectory()) return own;
  return [...own, ...readdirSync(dir).flatMap((name) => openToOthers(path.join(dir, name)))];
};

/** Opens every path under `dir` to all, as an older version (or a copy with another umask) left it. */
const openUp = (dir: string): void => {
  const stats = lstatSync(dir);
  chmodSync(dir, stats.isDirectory() ? 0o777 : 0o666);
  if (stats.isDirectory()) for (const name of readdirSync(dir)) openUp(path.join(dir, name));
};

describe('the data directory on disk', SLOW, () => {
  it('is its user’s alone after ctx ingest and ctx serve under umask 022, and an open data directory is fixed on open', async () => {
    const dataDir = path.join(tempDataDir(), '.ctx');
    const jsonl = path.join(path.dirname(dataDir), 'notes.jsonl');
    writeFileSync(jsonl, `${JSON.stringify({ source_id: 'notes.md', body: 'quokkas live on Rottnest' })}\n`);

    const ingested = await exitOf(ctxUnderUmask022(['ingest', '--jsonl', jsonl, '--source', 'notes', '--data-dir', dataDir]));
    expect(ingested.code, ingested.stderr).toBe(0);
    expect(existsSync(path.join(dataDir, 'pgdata', 'global', 'pg_control'))).toBe(true);
    expect(openToOthers(dataDir)).toEqual([]);

    openUp(dataDir);
    const server = ctxUnderUmask022(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0']);
    const served = exitOf(server);
    while (!existsSync(path.join(dataDir, 'server.json')) && server.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // While it serves, the files the database has made are closed to others already.
    expect(openToOthers(dataDir)).toEqual([]);
    server.kill('SIGTERM');
    const stopped = await served;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(openToOthers(dataDir)).toEqual([]);
  });
});

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../../src/errors.js';

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes `<dataDir>/ctx.lock` for this process: PGlite must never be opened by two processes at
 * once. A lock left by a process that no longer runs (after a crash) is taken over.
 */
export const lockDataDir = (dataDir: string): { release(): void } => {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'ctx.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return {
        release: () => {
          if (readFileSync(file, 'utf8') === String(process.pid)) rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(holder) && holder !== process.pid && isRunning(holder)) {
        const url = dataDirHolder(dataDir)?.url;
        throw new AppError(
          'data_dir_locked',
          2,
          `Data directory ${path.resolve(dataDir)} is in use by ${url ? `the server at ${url} (process ${holder})` : `process ${holder}`}; ` +
            'stop it first, or use another --data-dir',
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new AppError('data_dir_locked', 2, `Could not lock data directory ${path.resolve(dataDir)}`);
};

const SERVER_FILE = 'server.json';

/** The process that holds a data directory, and the URL it serves HTTP on when it is a server. */
export interface DataDirHolder {
  pid: number;
  url: string | null;
}

/** Who holds the data directory now; null when no running process does. */
export const dataDirHolder = (dataDir: string): DataDirHolder | null => {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dataDir, 'ctx.lock'), 'utf8'));
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid === process.pid || !isRunning(pid)) return null;
  try {
    const server = JSON.parse(readFileSync(path.join(dataDir, SERVER_FILE), 'utf8')) as Partial<DataDirHolder>;
    // A file left by an earlier server names another process.
    return { pid, url: server.pid === pid && typeof server.url === 'string' ? server.url : null };
  } catch {
    return { pid, url: null };
  }
};

/**
 * Writes `<dataDir>/server.json` beside the lock, so that other processes (the CLI) reach the data
 * through this server; the returned function removes it.
 */
export const advertiseServer = (dataDir: string, url: string): (() => void) => {
  const file = path.join(dataDir, SERVER_FILE);
  const content = JSON.stringify({ pid: process.pid, url });
  writeFileSync(file, content);
  return () => {
    try {
      if (readFileSync(file, 'utf8') === content) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
};

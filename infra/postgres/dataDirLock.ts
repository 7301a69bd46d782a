import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
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

/** The process a lock file names, or undefined when it names none (empty, truncated or garbled: stale). */
const holderOf = (file: string): number | undefined => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!/^[1-9]\d*$/.test(text)) return undefined;
  return Number(text);
};

/**
 * Creates `file` holding `content`, or throws EEXIST. The content is written and synced under a
 * name of this process's own, then linked into place: the lock never exists half-written, so a
 * lock that names no process can only be left by a crash, and is stale.
 */
const createWith = (file: string, content: string) => {
  const draft = `${file}.${process.pid}.tmp`;
  const fd = openSync(draft, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(draft, file);
  } finally {
    rmSync(draft, { force: true });
  }
};

/**
 * Takes `<dataDir>/ctx.lock` for this process: PGlite must never be opened by two processes at
 * once. A lock left by a process that no longer runs (after a crash), or naming no process, is taken over.
 */
export const lockDataDir = (dataDir: string): { release(): void } => {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'ctx.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      createWith(file, String(process.pid));
      return {
        release: () => {
          if (holderOf(file) === process.pid) rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderOf(file);
      if (holder !== undefined && holder !== process.pid && isRunning(holder)) {
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
  let pid: number | undefined;
  try {
    pid = holderOf(path.join(dataDir, 'ctx.lock'));
  } catch {
    return null;
  }
  if (pid === undefined || pid === process.pid || !isRunning(pid)) return null;
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

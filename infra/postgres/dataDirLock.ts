import {
  closeSync,
  constants,
  fsyncSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { AppError } from '../../src/errors.js';
import { LOCK_FILE, SERVER_FILE } from '../../src/domain/ledgerFiles.js';
import { isSecret } from '../crypto/serverProof.js';
import { keepDataDirPrivate } from './privateFiles.js';
import { markDataDir } from '../dataDirMarker.js';

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
  const fd = openSync(draft, 'w', 0o600);
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
 * Taking and releasing the lock leaves the directory and its files to this user alone.
 */
export const lockDataDir = (dataDir: string): { release(): void } => {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  markDataDir(dataDir);
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      createWith(file, String(process.pid));
      keepDataDirPrivate(dataDir);
      return {
        release: () => {
          if (holderOf(file) !== process.pid) return;
          keepDataDirPrivate(dataDir);
          rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderOf(file);
      if (holder !== undefined && holder !== process.pid && isRunning(holder)) {
        const url = dataDirHolder(dataDir)?.server?.url;
        throw new AppError(
          'DATA_DIR_LOCKED',
          `Data directory ${path.resolve(dataDir)} is in use by ${url ? `the server at ${url} (process ${holder})` : `process ${holder}`}; ` +
            'stop it first, or use another --data-dir',
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new AppError('DATA_DIR_LOCKED', `Could not lock data directory ${path.resolve(dataDir)}`);
};

/** What a trustworthy `server.json` says: where the server listens and the secret it proves itself with. */
export interface AdvertisedServer {
  url: string;
  secret: string;
}

/** The process that holds a data directory, and what it advertises when it is a server. */
export interface DataDirHolder {
  pid: number;
  /** The server this process runs, when its `server.json` can be trusted. */
  server: AdvertisedServer | null;
  /** Why the `server.json` present cannot be trusted; null when there is none, or it is trusted. */
  distrust: string | null;
}

const isLoopback = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/**
 * Reads `server.json` through one descriptor, never through a symbolic link. Only the user's own
 * file, which nobody else can read or write, naming a loopback URL and a secret, is trusted: any
 * other (a file that came with a cloned repository, one another user wrote) names a server that
 * must not get credentials or data.
 */
type ServerFileContent = Partial<AdvertisedServer & { pid: number }>;

const readServerFile = (file: string): { content: ServerFileContent } | { distrust: string } | null => {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    return { distrust: code === 'ELOOP' ? 'it is a symbolic link' : `it cannot be read (${code})` };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { distrust: 'it is not a regular file' };
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) return { distrust: `it belongs to another user (uid ${stats.uid})` };
    if (uid !== undefined && (stats.mode & 0o077) !== 0) {
      return { distrust: `other users can read or write it (mode ${(stats.mode & 0o777).toString(8)}; a server writes it 600)` };
    }
    const content = JSON.parse(readFileSync(fd, 'utf8')) as ServerFileContent | null;
    if (!content || typeof content !== 'object') return { distrust: 'it is not a JSON object' };
    return { content };
  } catch {
    return { distrust: 'it is not valid JSON' };
  } finally {
    closeSync(fd);
  }
};

/** Who holds the data directory now; null when no running process does. */
export const dataDirHolder = (dataDir: string): DataDirHolder | null => {
  let pid: number | undefined;
  try {
    pid = holderOf(path.join(dataDir, LOCK_FILE));
  } catch {
    return null;
  }
  if (pid === undefined || pid === process.pid || !isRunning(pid)) return null;
  const read = readServerFile(path.join(dataDir, SERVER_FILE));
  if (!read) return { pid, server: null, distrust: null };
  if ('distrust' in read) return { pid, server: null, distrust: read.distrust };
  const { pid: serverPid, url, secret } = read.content;
  // A file left by an earlier server names another process.
  if (serverPid !== pid) return { pid, server: null, distrust: null };
  let hostname: string;
  try {
    hostname = new URL(String(url)).hostname;
  } catch {
    return { pid, server: null, distrust: 'it names no valid URL' };
  }
  if (!isLoopback(hostname)) return { pid, server: null, distrust: `its URL ${String(url)} is not on loopback` };
  if (!isSecret(secret)) return { pid, server: null, distrust: 'it holds no secret for the server to prove itself with' };
  return { pid, server: { url: String(url), secret }, distrust: null };
};

/**
 * Writes `<dataDir>/server.json` beside the lock, readable by this user only, so that the CLI can
 * reach the data through this server, and check with `secret` that it talks to this server; the
 * returned function removes it.
 */
export const advertiseServer = (dataDir: string, server: AdvertisedServer): (() => void) => {
  const file = path.join(dataDir, SERVER_FILE);
  const content = JSON.stringify({ pid: process.pid, ...server });
  const draft = `${file}.${process.pid}.tmp`;
  rmSync(draft, { force: true });
  writeFileSync(draft, content, { mode: 0o600, flag: 'wx' });
  renameSync(draft, file);
  return () => {
    try {
      if (readFileSync(file, 'utf8') === content) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
};

import { chmodSync, lstatSync, readdirSync, type Stats } from 'node:fs';
import path from 'node:path';
import { DATABASE_DIR } from '../../src/domain/ledgerFiles.js';

/** Takes group and other users' access away from one file or directory; symbolic links are left alone. */
const restrict = (file: string): Stats | undefined => {
  let stats: Stats;
  try {
    stats = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (stats.isSymbolicLink()) return undefined;
  if ((stats.mode & 0o077) !== 0) chmodSync(file, stats.mode & 0o700);
  return stats;
};

const restrictTree = (dir: string): void => {
  if (restrict(dir)?.isDirectory()) for (const name of readdirSync(dir)) restrictTree(path.join(dir, name));
};

/**
 * Leaves a data directory to its user alone: the directory, the files in it (lock, server file,
 * secrets key) and the embedded database's whole tree. The database writes its files readable and
 * writable by all (0666) whatever the umask, so this runs when the directory is opened, once the
 * database has made its files, and when it is closed. Other folders a user keeps there are not entered.
 */
export const keepDataDirPrivate = (dataDir: string): void => {
  if (!restrict(dataDir)?.isDirectory()) return;
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.isFile()) restrict(path.join(dataDir, entry.name));
  }
  restrictTree(path.join(dataDir, DATABASE_DIR));
};

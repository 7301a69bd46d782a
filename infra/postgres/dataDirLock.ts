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
        throw new AppError(
          'data_dir_locked',
          2,
          `Data directory ${path.resolve(dataDir)} is in use by process ${holder}; stop it first, or use another --data-dir`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new AppError('data_dir_locked', 2, `Could not lock data directory ${path.resolve(dataDir)}`);
};

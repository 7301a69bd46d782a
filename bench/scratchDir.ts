import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The directories `scratchDir` made that are still there. */
const made: string[] = [];

/**
 * A new directory under the system's temporary one, for a bench's databases and files. It is removed
 * when its bench ends (bench/run.ts), or when the process exits, Ctrl-C included: a million-document
 * run leaves gigabytes, which a run after run would pile up. A bench that keeps its database for a
 * later run takes the directory from CTX_BENCH_DATA_DIR instead.
 */
export const scratchDir = (prefix: string): string => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};

/** Removes every directory `scratchDir` has made so far. */
export const removeScratchDirs = (): void => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
};

process.once('exit', removeScratchDirs);

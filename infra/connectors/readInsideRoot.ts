import { constants, type Stats } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import type { SkipReason } from './types.js';

/** Whether `realPath` (a real path) lies inside `realRoot` (the root's real path). */
export const isInsideRoot = (realRoot: string, realPath: string): boolean => {
  const fromRoot = relative(realRoot, realPath);
  return fromRoot !== '..' && !fromRoot.startsWith(`..${sep}`) && resolve(realRoot, fromRoot) === realPath;
};

export type RootRead =
  | { readonly content: Buffer; readonly stats: Stats }
  | { readonly reason: SkipReason; readonly detail: string };

/** Most a single read asks for: a file is read in pieces, never more than the cap and one byte. */
const PIECE_BYTES = 1024 * 1024;

/**
 * Reads a regular file inside a root through one descriptor, so that what was checked is what is
 * read, however the tree changes meanwhile: the path's last component must not be a symbolic link
 * (O_NOFOLLOW), the file opened must be the one at a real path inside the root (which covers the
 * folders along the path), and no more than `maxBytes` and one byte are ever read, however large
 * the file is or grows.
 */
export const readInsideRoot = async (file: string, realRoot: string, maxBytes: number): Promise<RootRead> => {
  // O_NONBLOCK: opening a FIFO put in the file's place must not wait for a writer.
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return null;
    throw error;
  });
  if (!handle) return { reason: 'outside_root', detail: 'became a symbolic link while being read' };
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { reason: 'excluded', detail: 'not a regular file' };
    if (stats.size > maxBytes) return { reason: 'too_large', detail: `${stats.size} bytes, limit ${maxBytes}` };
    const real = await realpath(file);
    const atReal = await stat(real);
    if (!isInsideRoot(realRoot, real) || atReal.dev !== stats.dev || atReal.ino !== stats.ino) {
      return { reason: 'outside_root', detail: 'a path outside the root' };
    }
    const pieces: Buffer[] = [];
    let total = 0;
    for (;;) {
      const piece = Buffer.allocUnsafe(Math.min(maxBytes + 1 - total, Math.max(stats.size + 1, PIECE_BYTES)));
      const { bytesRead } = await handle.read(piece, 0, piece.length, null);
      if (bytesRead === 0) break;
      pieces.push(piece.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) return { reason: 'too_large', detail: `more than ${maxBytes} bytes` };
    }
    return { content: Buffer.concat(pieces, total), stats };
  } finally {
    await handle.close();
  }
};

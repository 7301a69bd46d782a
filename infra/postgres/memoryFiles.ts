import type { PGlite } from '@electric-sql/pglite';

/** The parts of Emscripten's in-memory file system (MEMFS) that decide how a file's storage grows. */
interface MemoryFileNode {
  contents: Uint8Array | null;
}
interface MemoryFileSystem {
  expandFileStorage(node: MemoryFileNode, needed: number): void;
  getFileDataAsTypedArray(node: MemoryFileNode): Uint8Array;
}

const isMemoryFileSystem = (memfs: Partial<MemoryFileSystem> | undefined): memfs is MemoryFileSystem =>
  typeof memfs?.expandFileStorage === 'function' && typeof memfs.getFileDataAsTypedArray === 'function';

/** MEMFS's own floor for a file's first storage. */
const MIN_CAPACITY = 256;

/**
 * An in-memory PGlite keeps its files in MEMFS, which grows a file past 1 MiB by an eighth at a
 * time and copies it whole each time: a table or WAL segment written to n bytes is copied about 8n
 * bytes over, and the large arrays it drops make the garbage collector run. Doubling copies about
 * n bytes, at the cost of up to twice a file's size in memory. A data directory is on disk and
 * does not use MEMFS.
 */
export const growMemoryFilesByDoubling = (db: PGlite): void => {
  const memfs = (db.Module.FS as unknown as { filesystems?: { MEMFS?: Partial<MemoryFileSystem> } })
    .filesystems?.MEMFS;
  // Another build of PGlite may lay MEMFS out differently: then it keeps its own growth.
  if (!isMemoryFileSystem(memfs)) return;
  memfs.expandFileStorage = (node, needed) => {
    const capacity = node.contents?.length ?? 0;
    if (capacity >= needed) return;
    const used = memfs.getFileDataAsTypedArray(node);
    node.contents = new Uint8Array(Math.max(needed, capacity * 2, MIN_CAPACITY));
    node.contents.set(used);
  };
};

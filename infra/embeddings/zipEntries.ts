import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';

/** A file inside a zip archive (a jar is one), as its central directory describes it. */
export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/** The entries of a zip file, read from its central directory (no zip64: archives under 4 GiB). */
export const readZipEntries = async (file: string): Promise<Map<string, ZipEntry>> => {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    // The end record is 22 bytes plus a comment of at most 65,535.
    const tailLength = Math.min(size, 22 + 65_535);
    const tail = Buffer.alloc(tailLength);
    await handle.read(tail, 0, tailLength, size - tailLength);
    let end = -1;
    for (let i = tailLength - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
        end = i;
        break;
      }
    }
    if (end < 0) throw new Error(`${file} is not a zip archive`);
    const count = tail.readUInt16LE(end + 10);
    const directorySize = tail.readUInt32LE(end + 12);
    const directoryOffset = tail.readUInt32LE(end + 16);
    const directory = Buffer.alloc(directorySize);
    await handle.read(directory, 0, directorySize, directoryOffset);

    const entries = new Map<string, ZipEntry>();
    let at = 0;
    for (let i = 0; i < count; i++) {
      if (directory.readUInt32LE(at) !== CENTRAL_FILE_HEADER)
        throw new Error(`${file}: damaged central directory`);
      const nameLength = directory.readUInt16LE(at + 28);
      const extraLength = directory.readUInt16LE(at + 30);
      const commentLength = directory.readUInt16LE(at + 32);
      const name = directory.toString('utf8', at + 46, at + 46 + nameLength);
      entries.set(name, {
        name,
        method: directory.readUInt16LE(at + 10),
        compressedSize: directory.readUInt32LE(at + 20),
        size: directory.readUInt32LE(at + 24),
        localHeaderOffset: directory.readUInt32LE(at + 42),
      });
      at += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
  } finally {
    await handle.close();
  }
};

/** The uncompressed bytes of one entry, as a stream. */
export const openZipEntry = async (file: string, entry: ZipEntry): Promise<Readable> => {
  const header = Buffer.alloc(30);
  const handle = await open(file);
  try {
    await handle.read(header, 0, 30, entry.localHeaderOffset);
  } finally {
    await handle.close();
  }
  if (header.readUInt32LE(0) !== LOCAL_FILE_HEADER) throw new Error(`${file}: damaged entry ${entry.name}`);
  const start = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (entry.compressedSize === 0) return createReadStream(file, { start, end: start - 1 });
  const raw = createReadStream(file, { start, end: start + entry.compressedSize - 1 });
  if (entry.method === STORED) return raw;
  if (entry.method === DEFLATED) {
    const inflate = createInflateRaw();
    raw.on('error', (error) => inflate.destroy(error));
    return raw.pipe(inflate);
  }
  raw.destroy();
  throw new Error(
    `${file}: entry ${entry.name} uses compression method ${entry.method}, which is not supported`,
  );
};

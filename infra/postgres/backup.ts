import { createHash, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { z } from 'zod';
import { position, START } from '../../src/domain/position.js';
import { DATABASE_DIR, LOCK_FILE } from '../../src/domain/ledgerFiles.js';
import { AppError } from '../../src/errors.js';
import { PGLITE_EXTENSIONS } from './database.js';
import { lockDataDir } from './dataDirLock.js';
import { DATA_DIR_MARKER_FILE, isDataDirMarker } from '../dataDirMarker.js';

/**
 * A backup of an embedded data directory is one gzip file: a magic line, a manifest line, then the
 * files the manifest lists, back to back. The database goes in as PGlite's own physical dump of
 * its data folder, so transaction ids, and with them event positions, are what they were.
 */
const MAGIC = 'context-ledger-backup';
const DATABASE_FILE = 'pgdata.tar';

const ManifestSchema = z.object({
  format: z.literal(1),
  createdAt: z.string(),
  /** The last event and how many there are: checked again after a restore. */
  head: z.string(),
  events: z.number().int().nonnegative(),
  files: z.array(
    z.object({ name: z.string().min(1), bytes: z.number().int().nonnegative(), sha256: z.string() }),
  ),
});
export type BackupManifest = z.infer<typeof ManifestSchema>;

export class BackupError extends AppError {
  override name = 'BackupError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('BACKUP_FAILED', message, undefined, options);
  }
}

/** The data directory's lock, refused with a word on what to do while another process (a server) holds it. */
const takeLock = (dataDir: string, doing: string) => {
  try {
    return lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof AppError && error.code === 'DATA_DIR_LOCKED') {
      throw new BackupError(
        `Cannot ${doing} while another process has the data directory open: ${error.message}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
};

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The last event's position and the number of events, read straight from the event table. */
const ledgerHead = async (db: PGlite): Promise<{ head: string; events: number }> => {
  const found = await db.query<{ found: boolean }>(
    `SELECT to_regclass('ledger_events') IS NOT NULL AS found`,
  );
  if (!found.rows[0]?.found) return { head: START, events: 0 };
  const last = await db.query<{ xid: string; gpos: string }>(
    `SELECT transaction_id::text AS xid, global_position::text AS gpos FROM ledger_events
     ORDER BY transaction_id DESC, global_position DESC LIMIT 1`,
  );
  const count = await db.query<{ events: number }>('SELECT count(*)::int AS events FROM ledger_events');
  const row = last.rows[0];
  return { head: row ? position(row.xid, row.gpos) : START, events: count.rows[0]?.events ?? 0 };
};

/** Files beside the database (the secrets key): everything at the top of the data directory but the lock. */
const sideFiles = (dataDir: string): string[] =>
  readdirSync(dataDir).filter((name) => name !== LOCK_FILE && statSync(path.join(dataDir, name)).isFile());

/**
 * Where a backup may be written, known before the database is read: a file (new, or one to
 * replace) in a folder that exists, and outside the data directory, whose next backup would
 * carry it.
 */
const checkBackupTarget = (dataDir: string, file: string) => {
  const target = path.resolve(file);
  if (existsSync(target) && statSync(target).isDirectory()) {
    throw new BackupError(`${file} is a folder: name the file to write, e.g. ${path.join(file, 'ledger.ctxbak')}`);
  }
  const folder = path.dirname(target);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new BackupError(`Cannot write ${file}: the folder ${folder} does not exist`);
  }
  if (path.relative(path.resolve(dataDir), target).split(path.sep)[0] !== '..') {
    throw new BackupError(`${file} is inside the data directory it backs up: write it elsewhere`);
  }
};

/** Writes `data` to `file` whole or not at all. */
const writeAtomically = (file: string, data: Buffer) => {
  const temp = `${file}.${randomUUID()}.partial`;
  try {
    writeFileSync(temp, data, { mode: 0o600 });
    renameSync(temp, file);
  } catch (error) {
    throw new BackupError(`Cannot write ${file}: ${(error as Error).message}`, { cause: error });
  } finally {
    rmSync(temp, { force: true });
  }
};

/**
 * Backs up an embedded data directory to `file`. It takes the directory's lock, so it refuses while
 * a server (or any other process) has the ledger open.
 */
export const backupDataDir = async (dataDir: string, file: string): Promise<BackupManifest> => {
  if (!existsSync(path.join(dataDir, DATABASE_DIR, 'PG_VERSION'))) {
    throw new BackupError(`No embedded database in ${path.resolve(dataDir)}`);
  }
  checkBackupTarget(dataDir, file);
  const lock = takeLock(dataDir, 'back up');
  try {
    const db = await PGlite.create(path.join(dataDir, DATABASE_DIR), { extensions: PGLITE_EXTENSIONS });
    let dump: Buffer;
    let ledger: { head: string; events: number };
    try {
      await db.exec('CHECKPOINT');
      ledger = await ledgerHead(db);
      dump = Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer());
    } finally {
      await db.close();
    }
    const files = [
      { name: DATABASE_FILE, data: dump },
      ...sideFiles(dataDir).map((name) => ({ name, data: readFileSync(path.join(dataDir, name)) })),
    ];
    const manifest: BackupManifest = {
      format: 1,
      createdAt: new Date().toISOString(),
      ...ledger,
      files: files.map(({ name, data }) => ({ name, bytes: data.length, sha256: sha256(data) })),
    };
    const header = Buffer.from(`${MAGIC}\n${JSON.stringify(manifest)}\n`, 'utf8');
    writeAtomically(file, gzipSync(Buffer.concat([header, ...files.map((f) => f.data)])));
    return manifest;
  } finally {
    lock.release();
  }
};

/**
 * A name a backup may write into the restored directory: one file at its top, never the database
 * folder or the lock. A backup is a file anyone can hand over, and its manifest names what it writes.
 */
const isTopLevelFileName = (name: string) =>
  name !== '.' && name !== '..' && !/[/\\\0]/.test(name) && name !== DATABASE_DIR && name !== LOCK_FILE;

/** Reads and checks a backup: gzip integrity, the manifest, and each file's size and sha256. */
export const readBackup = (file: string): { manifest: BackupManifest; files: Map<string, Buffer> } => {
  if (!existsSync(file)) throw new BackupError(`No backup file ${path.resolve(file)}`);
  const invalid = (why: string, cause?: unknown) =>
    new BackupError(`${path.resolve(file)} is not a valid Context Ledger backup: ${why}`, { cause });
  let raw: Buffer;
  try {
    raw = gunzipSync(readFileSync(file));
  } catch (error) {
    throw invalid('it is damaged or not gzip', error);
  }
  const magicEnd = raw.indexOf('\n');
  const manifestEnd = raw.indexOf('\n', magicEnd + 1);
  if (magicEnd < 0 || raw.subarray(0, magicEnd).toString('utf8') !== MAGIC || manifestEnd < 0) {
    throw invalid('no backup header');
  }
  let manifest: BackupManifest;
  try {
    manifest = ManifestSchema.parse(JSON.parse(raw.subarray(magicEnd + 1, manifestEnd).toString('utf8')));
  } catch (error) {
    throw invalid('its manifest is unreadable', error);
  }
  const files = new Map<string, Buffer>();
  let offset = manifestEnd + 1;
  for (const { name, bytes, sha256: expected } of manifest.files) {
    if (!isTopLevelFileName(name))
      throw invalid(`its manifest names '${name}', not a file at the top of a data directory`);
    if (files.has(name)) throw invalid(`its manifest names '${name}' twice`);
    const data = raw.subarray(offset, offset + bytes);
    if (data.length !== bytes || sha256(data) !== expected)
      throw invalid(`${name} does not match its checksum`);
    files.set(name, data);
    offset += bytes;
  }
  if (offset !== raw.length) throw invalid('it has trailing data');
  if (!files.has(DATABASE_FILE)) throw invalid('it holds no database');
  return { manifest, files };
};

/** Unpacks a backup into a new folder and opens it, checking that it holds what the manifest says. */
const stage = async (staging: string, manifest: BackupManifest, files: Map<string, Buffer>) => {
  mkdirSync(staging, { recursive: true });
  const db = await PGlite.create(path.join(staging, DATABASE_DIR), {
    extensions: PGLITE_EXTENSIONS,
    loadDataDir: new Blob([new Uint8Array(files.get(DATABASE_FILE)!)]),
  });
  try {
    const restored = await ledgerHead(db);
    if (restored.head !== manifest.head || restored.events !== manifest.events) {
      throw new BackupError(
        `The restored database holds ${restored.events} events up to ${restored.head}; ` +
          `the backup says ${manifest.events} up to ${manifest.head}`,
      );
    }
  } finally {
    await db.close();
  }
  for (const [name, data] of files) {
    if (name !== DATABASE_FILE) writeFileSync(path.join(staging, name), data, { mode: 0o600 });
  }
};

/** Empty, or holding only the lock or the data directory's mark (as a first open leaves it). */
const isEmptyDir = (dir: string) =>
  !existsSync(dir) ||
  readdirSync(dir).every(
    (name) =>
      name === LOCK_FILE ||
      (name === DATA_DIR_MARKER_FILE && isDataDirMarker(readFileSync(path.join(dir, name), 'utf8'))),
  );

/**
 * Restores a backup into `dataDir`: into a new folder beside it first, opened and checked against
 * the manifest, then renamed into place. A data directory that holds anything is replaced only
 * with `force`, and never while a process has it open.
 */
export const restoreDataDir = async (
  file: string,
  dataDir: string,
  { force = false }: { force?: boolean } = {},
): Promise<BackupManifest> => {
  const { manifest, files } = readBackup(file);
  const target = path.resolve(dataDir);
  if (!isEmptyDir(target) && !force) {
    throw new BackupError(
      `${target} is not empty: restore into a new directory, or pass --force to replace it`,
    );
  }
  const lock = existsSync(target) ? takeLock(target, 'restore') : null;
  const staging = `${target}.restoring-${randomUUID()}`;
  try {
    await stage(staging, manifest, files);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    lock?.release();
    throw error;
  }
  if (lock) {
    // The old directory, its lock inside, moves aside and goes; the restored one takes its name.
    const replaced = `${target}.replaced-${randomUUID()}`;
    renameSync(target, replaced);
    renameSync(staging, target);
    rmSync(replaced, { recursive: true, force: true });
  } else {
    mkdirSync(path.dirname(target), { recursive: true });
    renameSync(staging, target);
  }
  return manifest;
};

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { restoreDataDir, type BackupManifest } from '../../infra/postgres/backup.js';
import { loadConfig } from '../../src/config.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const ENV = { CTX_EMBEDDINGS__PROVIDER: 'none', CTX_LOG__LEVEL: 'silent' };

const open = (dataDir: string) =>
  openLedger(loadConfig({ env: ENV, overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } } }), {
    logger: pino({ level: 'silent' }),
  });

const operationContext = {
  actor: { subject: 'alice', tenant: null, via: 'cli' as const },
  project: DEFAULT_PROJECT,
};
const run = <T = Record<string, unknown>>(ledger: Ledger, name: string, input: object) =>
  ledger
    .operation(name)
    .run(input as never, { ...operationContext, correlationId: crypto.randomUUID() }) as Promise<T>;

const ingest = (ledger: Ledger, sourceId: string, body: string) =>
  run(ledger, 'documents.ingest_batch', {
    source: 'notes',
    documents: [{ source_id: sourceId, title: sourceId, body }],
  });

const identities = (events: readonly StoredEvent[]) =>
  events.map((e) => ({ id: e.metadata.eventId, type: e.type, stream: e.streamId, position: e.position }));

/** What a user reads back: every event, the documents, search, and an annotation export. */
const snapshot = async (ledger: Ledger, sessionId: string) => {
  await ledger.catchUp();
  return {
    events: identities(await ledger.store.readAll()),
    documents: (await ledger.readModels.find('documents', { orderBy: [{ field: 'id', direction: 'asc' }] }))
      .items,
    search: await run(ledger, 'search', { query: 'lighthouse keeper', mode: 'keyword' }),
    annotations: await run(ledger, 'export_annotations', { sessionId }),
  };
};

const ctx = async (args: string[], env: NodeJS.ProcessEnv = {}) => runCtx(args, { ...ENV, ...env });

describe('ctx backup and ctx restore of the embedded data directory', () => {
  it('restores the same events at the same positions and the same read models; new events follow the old head', async () => {
    const dataDir = tempDataDir('ctx-backup-');
    const file = path.join(tempDataDir('ctx-backup-file-'), 'ledger.ctxbak');
    let ledger = await open(dataDir);
    let sessionId: string;
    let before: Awaited<ReturnType<typeof snapshot>>;
    try {
      await ingest(ledger, 'lighthouse.md', '# Lighthouse\n\nThe lighthouse keeper logs every passing ship.');
      await ingest(ledger, 'tides.md', '# Tides\n\nSpring tides follow the full moon.');
      ({ sessionId } = await run<{ sessionId: string }>(ledger, 'start_session', {
        config: { chunks: [{ chunk_id: 'c0', position: 0, text: 'text' }] },
      }));
      await run(ledger, 'annotate_chunk', { sessionId, chunkId: 'c0', notes: 'sealed note', tags: ['x'] });
      before = await snapshot(ledger, sessionId);

      // The server (here: this process) holds the data directory: a backup refuses, saying why.
      const refused = await ctx(['backup', file, '--data-dir', dataDir]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('another process has the data directory open');
    } finally {
      await ledger.close();
    }

    // Where a backup cannot go is said before the database is read.
    for (const [target, message] of [
      [path.dirname(file), `${path.dirname(file)} is a folder: name the file to write, e.g. ${path.join(path.dirname(file), 'ledger.ctxbak')}`],
      [path.join(path.dirname(file), 'missing', 'x.ctxbak'), `the folder ${path.join(path.dirname(file), 'missing')} does not exist`],
      [path.join(dataDir, 'inside.ctxbak'), 'is inside the data directory it backs up: write it elsewhere'],
    ]) {
      const misplaced = await ctx(['backup', target!, '--data-dir', dataDir]);
      expect(misplaced.code, target).toBe(2);
      expect(misplaced.stderr).toContain(message);
      expect(misplaced.stderr).not.toMatch(/\n\s+at /);
    }

    const backup = await ctx(['backup', file, '--data-dir', dataDir]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(new RegExp(`backed up ${before.events.length} events \\(up to \\d+-\\d+\\)`));

    ledger = await open(dataDir);
    try {
      await ingest(ledger, 'later.md', 'Written after the backup.');
    } finally {
      await ledger.close();
    }

    const restoredDir = path.join(tempDataDir('ctx-restore-'), 'restored');
    const restore = await ctx(['restore', file, '--data-dir', restoredDir]);
    expect(restore.code, restore.stderr).toBe(0);

    ledger = await open(restoredDir);
    try {
      const after = await snapshot(ledger, sessionId);
      expect(after).toEqual(before);
      expect(after.annotations).toMatchObject({ chunks: [{ notes: 'sealed note' }] });
      await ingest(ledger, 'after-restore.md', 'Written after the restore.');
      const [newest] = await ledger.store.readAll({ direction: 'backwards', maxCount: 1 });
      expect(newest!.position > before.events.at(-1)!.position).toBe(true);
    } finally {
      await ledger.close();
    }

    // Replacing a data directory that holds a ledger needs --force, and then holds exactly the backup.
    await expect(restoreDataDir(file, dataDir)).rejects.toThrow('is not empty');
    await restoreDataDir(file, dataDir, { force: true });
    ledger = await open(dataDir);
    try {
      expect(identities(await ledger.store.readAll())).toEqual(before.events);
    } finally {
      await ledger.close();
    }
  }, 300_000);

  it('refuses a missing or damaged archive and leaves the target as it was', async () => {
    const dir = tempDataDir('ctx-restore-bad-');
    const target = path.join(dir, 'target');
    await expect(restoreDataDir(path.join(dir, 'missing.ctxbak'), target)).rejects.toThrow('No backup file');

    const garbage = path.join(dir, 'garbage.ctxbak');
    writeFileSync(garbage, 'not a backup at all');
    await expect(restoreDataDir(garbage, target)).rejects.toThrow('damaged or not gzip');

    const foreign = path.join(dir, 'foreign.ctxbak');
    writeFileSync(foreign, gzipSync(Buffer.from('some other gzip file\n')));
    await expect(restoreDataDir(foreign, target)).rejects.toThrow('no backup header');

    const source = tempDataDir('ctx-backup-src-');
    const ledger = await open(source);
    await ledger.close();
    const good = path.join(dir, 'good.ctxbak');
    expect((await ctx(['backup', good, '--data-dir', source])).code).toBe(0);
    const raw = gunzipSync(readFileSync(good));
    raw[raw.length - 100] = (raw[raw.length - 100]! + 1) % 256;
    const damaged = path.join(dir, 'damaged.ctxbak');
    writeFileSync(damaged, gzipSync(raw));
    await expect(restoreDataDir(damaged, target)).rejects.toThrow('does not match its checksum');
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.includes('.restoring-'))).toEqual([]);
    await expect(restoreDataDir(good, target)).resolves.toMatchObject({ format: 1 });
  }, 120_000);

  it('refuses a backup whose manifest names a file outside the data directory, and writes nothing', async () => {
    const dir = tempDataDir('ctx-restore-names-');
    const source = tempDataDir('ctx-backup-src-');
    await (await open(source)).close();
    const good = path.join(dir, 'good.ctxbak');
    expect((await ctx(['backup', good, '--data-dir', source])).code).toBe(0);

    /** The good backup with one more file, named `name` in its manifest (checksum and all). */
    const withFile = (name: string) => {
      const raw = gunzipSync(readFileSync(good));
      const magicEnd = raw.indexOf('\n');
      const manifestEnd = raw.indexOf('\n', magicEnd + 1);
      const manifest = JSON.parse(raw.subarray(magicEnd + 1, manifestEnd).toString('utf8')) as BackupManifest;
      const data = Buffer.from('written by a crafted backup\n');
      manifest.files.push({
        name,
        bytes: data.length,
        sha256: createHash('sha256').update(data).digest('hex'),
      });
      const crafted = path.join(
        dir,
        `crafted-${manifest.files.length}-${Buffer.from(name).toString('hex')}.ctxbak`,
      );
      const header = Buffer.from(`context-ledger-backup\n${JSON.stringify(manifest)}\n`);
      writeFileSync(crafted, gzipSync(Buffer.concat([header, raw.subarray(manifestEnd + 1), data])));
      return crafted;
    };

    const target = path.join(dir, 'nested', 'target');
    for (const name of [
      '../../escaped.txt',
      `${dir}/absolute.txt`,
      '..',
      'pgdata',
      'ctx.lock',
      'secrets.key',
    ]) {
      const refused = await ctx(['restore', withFile(name), '--data-dir', target]);
      expect(refused.code, name).toBe(2);
      expect(refused.stderr, name).toContain(
        name === 'secrets.key'
          ? `its manifest names '${name}' twice`
          : `its manifest names '${name}', not a file at the top`,
      );
    }
    expect(readdirSync(dir).filter((name) => !name.endsWith('.ctxbak'))).toEqual([]);
    expect(existsSync(path.join(dir, 'escaped.txt'))).toBe(false);

    expect((await ctx(['restore', withFile('notes.txt'), '--data-dir', target])).code).toBe(0);
    expect(readFileSync(path.join(target, 'notes.txt'), 'utf8')).toBe('written by a crafted backup\n');
  }, 120_000);

  it('refuses clearly for a ledger on a PostgreSQL server', async () => {
    const file = path.join(tempDataDir('ctx-backup-pg-'), 'never.ctxbak');
    const refused = await ctx(['backup', file], {
      CTX_STORAGE__POSTGRES_URL: 'postgres://ledger@db.invalid/ctx',
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pg_basebackup');
  }, 60_000);
});

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPglite } from '../../infra/postgres/database.js';
import { lockDataDir } from '../../infra/postgres/dataDirLock.js';
import { readLiveCheckpoint } from '../../infra/postgres/checkpoints.js';
import { postgresReadModels } from '../../infra/postgres/documentReadModels.js';
import { createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import type { StreamSummary } from '../../projections/ledger/streamSummaries.js';

const WORKER = path.resolve(import.meta.dirname, '../support/crashWorker.ts');

/** Runs the worker until it has acknowledged `acks` appends plus a random few more, then SIGKILLs it. */
const runAndKill = (dataDir: string, acks: number) =>
  new Promise<Map<string, number>>((resolve, reject) => {
    const acked = new Map<string, number>();
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const killAt = acks + Math.floor(Math.random() * 20);
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        const [word, stream, revision] = line.split(' ');
        if (word === 'acked') acked.set(stream!, Number(revision));
      }
      if (acked.size >= killAt) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', () => resolve(acked));
  });

describe('after kill -9', () => {
  it('keeps every acknowledged event and a projection consistent with its checkpoint', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ctx-crash-'));
    const acked = new Map<string, number>();
    for (let round = 0; round < 3; round++) {
      for (const [stream, revision] of await runAndKill(dataDir, 40)) acked.set(stream, revision);
    }

    const lock = lockDataDir(dataDir); // the dead worker's lock is taken over
    const db = await openPglite(path.join(dataDir, 'pgdata'));
    try {
      const store = await createPostgresEventStore(db);
      for (const [stream, revision] of acked) {
        const events = await store.readStream(stream);
        expect(events.at(-1)?.revision, stream).toBe(BigInt(revision));
      }
      const checkpoint = await readLiveCheckpoint(db, 'streams');
      const all = await store.readAll({ maxCount: 1_000_000 });
      const applied = all.filter((e) => e.position <= checkpoint);
      const { items } = await postgresReadModels(db).find<StreamSummary>('streams', { limit: 1_000_000 });
      expect(items.reduce((sum, s) => sum + s.events, 0)).toBe(applied.length);
      expect(new Set(items.map((s) => s.streamId))).toEqual(new Set(applied.map((e) => e.streamId)));
    } finally {
      await db.close();
      lock.release();
    }
  }, 180_000);
});

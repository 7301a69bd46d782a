import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { annotationsModule } from '../../src/modules/annotationsModule.js';
import { ledgerModule } from '../../src/modules/ledgerModule.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const open = (dataDir: string) =>
  openLedger(loadConfig({ env: {}, overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } } }), {
    logger: pino({ level: 'silent' }),
    modules: [ledgerModule, annotationsModule],
  });

const context = { actor: { subject: 'alice', tenant: null, via: 'rest' as const }, correlationId: crypto.randomUUID(), project: DEFAULT_PROJECT };
const call = <T = Record<string, unknown>>(ledger: Ledger, name: string, input: object) =>
  ledger.operation(name).run(input as never, context) as Promise<T>;

describe('the master key file of a data directory', () => {
  it('is made for a fresh data directory, and its loss over sealed notes stops the start instead of making a new one', async () => {
    const dataDir = tempDataDir();
    const keyFile = path.join(dataDir, 'secrets.key');
    let ledger = await open(dataDir);
    let sessionId: string;
    try {
      await ledger.start();
      expect(existsSync(keyFile)).toBe(true);
      ({ sessionId } = await call<{ sessionId: string }>(ledger, 'start_session', {
        config: { chunks: [{ chunk_id: 'c0', position: 0, text: 'text' }] },
      }));
      await call(ledger, 'annotate_chunk', { sessionId, chunkId: 'c0', notes: 'sealed note' });
    } finally {
      await ledger.close();
    }
    const key = readFileSync(keyFile, 'utf8');
    rmSync(keyFile);

    await expect(open(dataDir)).rejects.toThrow(`The master key file ${keyFile} is missing`);
    const cli = await runCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain(`The master key file ${keyFile} is missing`);
    expect(cli.stderr).toMatch(/Restore the file.*, or.*set auth\.secrets_key/);
    expect(existsSync(keyFile)).toBe(false);

    // Once the file is back, the sealed note opens again.
    writeFileSync(keyFile, key);
    ledger = await open(dataDir);
    try {
      await ledger.start();
      const exported = await call<{ chunks: { notes?: string }[] }>(ledger, 'export_annotations', { sessionId });
      expect(JSON.stringify(exported)).toContain('sealed note');
    } finally {
      await ledger.close();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { openLedger, type Ledger } from '../../src/main.js';
import type { OperationContext } from '../../src/operations.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const KEYWORD_ONLY = { CTX_EMBEDDINGS__PROVIDER: 'none' };
const context: OperationContext = {
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: randomUUID(),
  project: 'default',
};
const QUERIES = ['consumer lag', 'certificate rotation', 'retention', 'invoice'];

const open = (dataDir: string) =>
  openLedger(loadConfig({ env: KEYWORD_ONLY, overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'silent' }),
  });

const searchAll = async (ledger: Ledger) => {
  await ledger.catchUp();
  const answers: unknown[] = [];
  for (const query of QUERIES) {
    answers.push(await ledger.operation('search').run({ query, mode: 'keyword', limit: 5 }, context));
  }
  return answers;
};

const essence = (events: readonly StoredEvent[]) =>
  events.map(({ streamId, revision, type, data, metadata }) => ({
    streamId,
    revision,
    type,
    data,
    metadata,
  }));

describe('migrating an embedded data directory to other stores', () => {
  it('copies the events through the port, rebuilds every read model there, and search answers the same', async () => {
    const sourceDir = tempDataDir('ctx-migrate-source-');
    const destinationDir = tempDataDir('ctx-migrate-destination-');

    const source = await open(sourceDir);
    let expected: unknown[];
    let sourceEvents: StoredEvent[];
    try {
      const ingest = (documents: object[]) =>
        source.operation('documents.ingest_batch').run({ source: 'notes', documents }, context);
      await ingest([
        {
          source_id: 'kafka.md',
          title: 'Kafka',
          body: 'Consumer lag alerts fire when consumer lag grows.',
          tags: ['ops'],
        },
        { source_id: 'certs.md', title: 'Certificates', body: 'Certificate rotation happens every quarter.' },
        { source_id: 'retention.md', title: 'Retention', body: 'Retention of topics is seven days.' },
        { source_id: 'billing.md', title: 'Billing', body: 'Invoices are sent monthly.' },
      ]);
      await ingest([
        {
          source_id: 'retention.md',
          title: 'Retention',
          body: 'Retention of topics is now thirty days; invoice archives too.',
        },
      ]);
      expected = await searchAll(source);
      sourceEvents = await source.store.readAll();
    } finally {
      await source.close();
    }
    expect(JSON.stringify(expected)).toContain('kafka.md');

    const destinationToml = path.join(destinationDir, 'ctx.toml');
    writeFileSync(
      destinationToml,
      `[storage]\ndata_dir = ${JSON.stringify(destinationDir)}\n\n[embeddings]\nprovider = "none"\n`,
    );
    const migrate = () =>
      runCtx(['--data-dir', sourceDir, 'migrate', '--to', destinationToml, '--json'], KEYWORD_ONLY);
    const first = await migrate();
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as { read: number; copied: number; projections: string[] };
    expect(report).toMatchObject({ read: sourceEvents.length, copied: sourceEvents.length });
    expect(report.projections).toEqual(expect.arrayContaining(['keyword']));

    // Again: nothing is copied twice.
    expect((await migrate()).code).toBe(0);

    const destination = await open(destinationDir);
    try {
      expect(essence(await destination.store.readAll())).toEqual(essence(sourceEvents));
      expect(await searchAll(destination)).toEqual(expected);
    } finally {
      await destination.close();
    }
  });
});

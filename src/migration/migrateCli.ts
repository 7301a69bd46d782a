import type { Command } from 'commander';
import { pino } from 'pino';
import { copyDataKeys } from '../../infra/postgres/postgresKeyring.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { printResult } from '../cli/output.js';
import { progressLine } from '../cli/progress.js';
import { loadConfig } from '../config.js';
import { createSecretBox } from '../../infra/crypto/secretBox.js';
import { openLedger, type Ledger } from '../main.js';
import { migrateEvents, type MigrationProgress } from './migrateEvents.js';

export interface MigrationReport extends MigrationProgress {
  /** Read models rebuilt in the destination, by name. */
  projections: string[];
}

/**
 * `ctx migrate --to <ctx.toml>`: copies every event of the configured ledger (usually the embedded
 * data directory), and the content its documents refer to, into the stores the other file
 * configures, then rebuilds every read model there from those events. Safe to run again: only missing events are copied.
 */
export const migrateCli = (
  program: Command,
  withLedger: <T>(command: Command, work: (ledger: Ledger) => Promise<T>) => Promise<T>,
): void => {
  program
    .command('migrate')
    .description(
      'copy every event into the stores of another configuration and rebuild its read models there',
    )
    .requiredOption(
      '--to <file>',
      'the ctx.toml of the destination (e.g. EventStoreDB, Meilisearch, PostgreSQL)',
    )
    .option('--json', 'print the report as JSON')
    .action(async (options: { to: string; json?: boolean }, command: Command) => {
      const report = await withLedger(command, async (source): Promise<MigrationReport> => {
        const destinationConfig = loadConfig({ file: options.to });
        const destination = await openLedger(destinationConfig, {
          logger: pino({ level: 'warn' }, pino.destination(2)),
        });
        try {
          const progress = progressLine();
          const content = {
            from: await createPostgresContentStore(source.db),
            to: await createPostgresContentStore(destination.db),
          };
          const copied = await migrateEvents(source.store, destination.store, {
            content,
            onProgress: (p) => progress.update(`copied ${p.copied} of ${p.read} events read`),
          });
          // Sealed annotation notes open only with their keys, re-wrapped for the destination's master key.
          await copyDataKeys(
            { db: source.db, box: createSecretBox(source.config) },
            { db: destination.db, box: createSecretBox(destinationConfig) },
          );
          progress.update('rebuilding read models');
          // The semantic index embeds on its own once the destination serves: the copy need not wait for it.
          await destination.catchUp({ embeddings: false });
          progress.done();
          return {
            ...copied,
            projections: destination.parts.flatMap((p) => (p.projections ?? []).map((r) => r.name)),
          };
        } finally {
          await destination.close();
        }
      });
      printResult(report, options.json, (r) =>
        `Copied ${r.copied} events (${r.read} read) into ${options.to}; rebuilt ${r.projections.join(', ')}.`,
      );
    });
};

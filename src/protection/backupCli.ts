import type { Command } from 'commander';
import { backupDataDir, BackupError, restoreDataDir } from '../../infra/postgres/backup.js';
import { printResult } from '../cli/output.js';
import { compactPosition } from '../domain/position.js';
import type { Config } from '../config.js';

/** Backups copy the embedded data directory; a ledger on servers is backed up with the servers' tools. */
const embeddedDataDir = (config: Config, verb: string): string => {
  if (config.storage.postgresUrl) {
    throw new BackupError(
      `ctx ${verb} works on the embedded data directory, and this ledger runs on a PostgreSQL server ` +
        '(storage.postgres_url): use pg_basebackup, which keeps transaction ids and so event positions ' +
        '(see "Data protection and backups" in the README)',
    );
  }
  if (config.storage.eventStore === 'eventstoredb') {
    throw new BackupError(
      `ctx ${verb} works on the embedded data directory, and this ledger keeps its events in EventStoreDB: ` +
        'back up EventStoreDB and the data directory together (see docs/deployment.md)',
    );
  }
  return config.storage.dataDir;
};

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** `1202 events (up to 6566-1022)`: the head as history prints positions; none before the first event. */
const eventsUpTo = ({ events, head }: { events: number; head: string }) =>
  events === 0 ? '0 events' : `${events} events (up to ${compactPosition(head)})`;

/** `ctx backup` and `ctx restore`: they need the data directory to themselves, so they never open a ledger. */
export const backupCli = (program: Command, configOf: (command: Command) => Config): void => {
  program
    .command('backup')
    .description('back up the embedded data directory to one file (stop `ctx serve` first)')
    .argument('<file>', 'the backup file to write')
    .option('--json', 'print the manifest as JSON')
    .action(async (file: string, options: { json?: boolean }, command: Command) => {
      const dataDir = embeddedDataDir(configOf(command), 'backup');
      const manifest = await backupDataDir(dataDir, file);
      const bytes = manifest.files.reduce((sum, f) => sum + f.bytes, 0);
      printResult(manifest, options.json, (m) => `backed up ${eventsUpTo(m)}, ${megabytes(bytes)}, to ${file}`);
    });
  program
    .command('restore')
    .description('restore a backup into the data directory: an empty one, or any with --force')
    .argument('<file>', 'a file written by `ctx backup`')
    .option('--force', 'replace a data directory that is not empty')
    .option('--json', 'print the manifest as JSON')
    .action(async (file: string, options: { force?: boolean; json?: boolean }, command: Command) => {
      const dataDir = embeddedDataDir(configOf(command), 'restore');
      const manifest = await restoreDataDir(file, dataDir, { force: options.force });
      printResult(manifest, options.json, (m) => `restored ${eventsUpTo(m)} into ${dataDir}`);
    });
};

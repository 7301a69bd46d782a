import type { Command } from 'commander';
import { createPostgresContentErasure } from '../../infra/postgres/postgresContentStore.js';
import { forgetOperation, forgetSurfaces } from '../../commands/forget.js';
import { fields } from '../cli/format.js';
import { printResult } from '../cli/output.js';
import type { LedgerModule, WithLedger } from '../module.js';

/** How long forgetting a document waits for the search indexes to drop its chunks. */
const INDEXES_TIMEOUT_MS = 5 * 60_000;

const forgetCli = (program: Command, withLedger: WithLedger) => {
  const forget = (command: Command, input: Record<string, unknown>) =>
    withLedger(command, async (ledger) => {
      await ledger.catchUp();
      return ledger.run('ledger.forget', input);
    });
  const group = program
    .command('forget')
    .description(
      'forget content without rewriting history: a document, or what a subject wrote in annotations',
    );
  group
    .command('document')
    .description(
      "erase a document's body and chunks (every version), its index entries and cached embeddings",
    )
    .argument('<id>', 'the document id')
    .option('--reason <reason>', 'why; kept in the audit event')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { reason?: string; json?: boolean }, command: Command) => {
      printResult(await forget(command, { document_id: id, reason: options.reason }), options.json, fields);
    });
  group
    .command('subject')
    .description(
      'make every annotation note and summary this subject wrote unreadable, by deleting their keys',
    )
    .argument('<subject>', 'the author, as events name them (actor subject)')
    .option('--tenant <tenant>', 'only in this tenant (default: every tenant)')
    .option('--reason <reason>', 'why; kept in the audit event')
    .option('--json', 'print JSON')
    .action(async (subject: string, options: { reason?: string; tenant?: string; json?: boolean }, command: Command) => {
      printResult(await forget(command, { subject, tenant: options.tenant, reason: options.reason }), options.json, fields);
    });
};

/** Data protection: forgetting documents and subjects (`ledger.forget`, admin scope). Backups are in `ctx backup`. */
export const protectionModule: LedgerModule = {
  name: 'protection',
  setup: async ({ db, store, keyring, waitForProjections }) => ({
    operations: [
      forgetOperation({
        store,
        keyring,
        erasure: await createPostgresContentErasure(db),
        waitForProjections: (position) => waitForProjections(position, INDEXES_TIMEOUT_MS),
      }),
    ],
  }),
  surfaces: [forgetSurfaces],
  cli: forgetCli,
};

import type { Command } from 'commander';
import type { z } from 'zod';
import { fields } from '../cli/format.js';
import { printResult } from '../cli/output.js';
import { progressLine } from '../cli/progress.js';
import { isTerminal } from '../domain/jobs.js';
import { AppError, NotFoundError } from '../errors.js';
import type { JobStatusResponse } from '../domain/jobResponses.js';
import type { LedgerHandle, WithLedger } from '../module.js';
import type { SyncOutputSchema } from './extensionsModule.js';

const isNotFound = (error: unknown) => error instanceof AppError && error.statusCode === 404;

/** A Lua connector syncs in the call itself; answers null when no Lua connector has that name. */
const syncLua = async (ledger: LedgerHandle, name: string) => {
  try {
    return await ledger.run<z.infer<typeof SyncOutputSchema>>('extensions.sync', { name });
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
};

/**
 * `ctx sync NAME`: syncs a Lua connector, or else a remote connector (GitHub, …) as a background
 * job that it follows to the end, here or on the server that holds the data.
 */
export const mountSyncCli = (program: Command, withLedger: WithLedger) => {
  program
    .command('sync')
    .description('sync a connector: a Lua connector, or a remote one (GitHub, …) as a job it follows to the end')
    .argument('<name>', 'the connector’s name (or a remote connector’s id)')
    .option('--json', 'print JSON')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      await withLedger(command, async (ledger) => {
        const lua = await syncLua(ledger, name);
        if (lua) {
          printResult(lua, options.json, (s) =>
            `synced ${s.connector}: ${s.documents} documents in ${s.pages} pages (${s.created} created, ${s.updated} updated, ${s.unchanged} unchanged)`,
          );
          return;
        }
        const started = await ledger
          .run<{ job_id: string; connector_id: string }>('connectors.sync', { connector: name })
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
            throw new NotFoundError(`No Lua connector named '${name}', nor a remote connector with that name or id`);
          });
        // In this process, this process is the runner; a server runs the job itself.
        await ledger.startWork();
        const line = progressLine();
        for (;;) {
          const status = await ledger.run<JobStatusResponse>('get_job_status', { job_id: started.job_id });
          line.update(`${status.status}: ${status.progress_message}`);
          if (isTerminal(status.status)) {
            line.done();
            const summary = {
              job_id: status.job_id,
              connector_id: started.connector_id,
              status: status.status,
              message: status.error_message ?? status.progress_message,
            };
            printResult(summary, options.json, (s) =>
              fields({ job: s.job_id, connector: s.connector_id, status: s.status, message: s.message }),
            );
            if (status.status !== 'completed') process.exitCode = 1;
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      });
    });
};

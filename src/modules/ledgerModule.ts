import type { Command } from 'commander';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { streamSummaries } from '../../projections/streamSummaries.js';
import { rebuildProjectionOperation } from '../../commands/rebuildProjection.js';
import { auditEventsOperation } from '../../queries/auditEvents.js';
import { documentAsOfOperation } from '../../queries/getDocument.js';
import { projectionStatusOperation, projectionStatusSurfaces, type ProjectionStatusOutput } from '../../queries/projectionStatus.js';
import { readHistoryOperation, readHistorySurfaces, type ReadHistoryOutput } from '../../queries/readHistory.js';
import { formatDuration, formatHistory, formatProjectionStatus, formatRebuildProgress } from '../cli/format.js';
import { printResult } from '../cli/output.js';
import { progressLine } from '../cli/progress.js';
import type { RebuildProgress } from '../engine/projectionRunner.js';
import type { LedgerModule } from '../module.js';

/** The event ledger itself: history of any stream, the audit log, time travel, and the projections that serve it. */
export const ledgerModule: LedgerModule = {
  name: 'ledger',
  surfaces: [readHistorySurfaces, projectionStatusSurfaces],
  setup: async ({ db, store, projections }) => ({
    projections: [await postgresDocumentProjection(db, streamSummaries)],
    operations: [
      readHistoryOperation(store),
      auditEventsOperation(store),
      documentAsOfOperation(store),
      projectionStatusOperation(projections),
      rebuildProjectionOperation(projections),
    ],
  }),
  cli(program, withLedger) {
    program
      .command('history')
      .description('list the events of a stream, or of all streams')
      .argument('[stream]', 'a stream id such as job-<uuid>; all streams when omitted')
      .option('--type <type...>', 'only these event types')
      .option('--since <iso>', 'only events recorded at or after this time')
      .option('--until <iso>', 'only events recorded at or before this time')
      .option('--limit <n>', 'events per page', (v) => Number(v), 50)
      .option('--cursor <cursor>', 'continue from a previous page')
      .option('--backwards', 'newest first')
      .option('--json', 'print JSON')
      .action(async (stream: string | undefined, options: Record<string, unknown>, command: Command) => {
        const page = await withLedger(command, (ledger) =>
          ledger.run<ReadHistoryOutput>('ledger.history', {
            stream,
            types: options.type as never,
            since: options.since as string | undefined,
            until: options.until as string | undefined,
            limit: options.limit as number,
            cursor: options.cursor as string | undefined,
            direction: options.backwards ? 'backwards' : 'forwards',
          }),
        );
        printResult(page, options.json as boolean | undefined, formatHistory);
      });

    program
      .command('audit')
      .description('the audit log: events across all streams, newest first, filtered')
      .option('--category <category>', 'stream category: the stream id before its first -, e.g. job, annotation, doc')
      .option('--type <type...>', 'only these event types (repeat, or separate with commas)')
      .option('--actor <subject>', 'only events written for this actor subject')
      .option('--project <project>', 'only events of this project')
      .option('--command-id <id>', 'only events written by this command')
      .option('--correlation-id <id>', 'only events of this correlation')
      .option('--since <iso>', 'only events recorded at or after this time')
      .option('--until <iso>', 'only events recorded at or before this time')
      .option('--oldest-first', 'oldest first')
      .option('--limit <n>', 'events per page', (v) => Number(v), 50)
      .option('--cursor <cursor>', 'continue from a previous page')
      .option('--json', 'print JSON')
      .action(async (options: Record<string, unknown>, command: Command) => {
        const output = await withLedger(command, (ledger) =>
          ledger.run<ReadHistoryOutput>('ledger.audit', {
            category: options.category as string | undefined,
            types: (options.type as string[] | undefined)?.flatMap((t) => t.split(',')) as never,
            actor: options.actor as string | undefined,
            project: options.project as string | undefined,
            commandId: options.commandId as string | undefined,
            correlationId: options.correlationId as string | undefined,
            since: options.since as string | undefined,
            until: options.until as string | undefined,
            order: options.oldestFirst ? 'oldest' : 'newest',
            limit: options.limit as number,
            cursor: options.cursor as string | undefined,
          }),
        );
        printResult(output, options.json as boolean | undefined, formatHistory);
      });

    const projections = program.command('projections').description('inspect and rebuild read models');
    projections
      .command('status')
      .description('checkpoint, lag and throughput of every projection')
      .option('--json', 'print JSON')
      .action(async (options: { json?: boolean }, command: Command) => {
        const { projections: status } = await withLedger(command, (ledger) =>
          ledger.run<ProjectionStatusOutput>('projections.status', {}),
        );
        printResult(status, options.json, formatProjectionStatus);
      });
    projections
      .command('rebuild')
      .description('rebuild a projection from the first event into a shadow copy, then swap it in')
      .argument('<name>', 'projection name (see `ctx projections status`)')
      .option('--json', 'print JSON')
      .action(async (name: string, options: { json?: boolean }, command: Command) => {
        const line = progressLine();
        const result = await withLedger(command, (ledger) =>
          ledger.run<RebuildProgress>(
            'projections.rebuild',
            { name },
            { onProgress: (p) => line.update(`rebuilding ${name}: ${formatRebuildProgress(p as unknown as RebuildProgress)}`) },
          ),
        );
        line.done();
        const took = (Date.now() - Date.parse(result.startedAt)) / 1000;
        printResult({ name, ...result }, options.json, () => `rebuilt ${name} from ${result.processedEvents} events in ${formatDuration(took)}`);
      });
  },
};

import { Command, CommanderError, Option } from 'commander';
import { pino } from 'pino';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { loadConfig, type Config } from '../config.js';
import { AppError } from '../errors.js';
import { openLedger, startServer, PRODUCT, type Ledger } from '../main.js';
import { readHistory } from '../../queries/readHistory.js';
import { formatHistory, formatProjectionStatus } from './format.js';

interface GlobalOptions {
  config?: string;
  dataDir?: string;
  bind?: string;
}

const configFrom = (options: GlobalOptions): Config =>
  loadConfig({
    file: options.config,
    overrides: { storage: { dataDir: options.dataDir }, server: { bind: options.bind } },
  });

/** Opens the ledger for a one-shot command, logging only warnings, to stderr. */
const withLedger = async <T>(options: GlobalOptions, work: (ledger: Ledger) => Promise<T>): Promise<T> => {
  const config = configFrom(options);
  const logger = pino({ level: config.log.level === 'info' ? 'warn' : config.log.level }, pino.destination(2));
  const ledger = await openLedger(config, { logger });
  try {
    return await work(ledger);
  } finally {
    await ledger.close();
  }
};

const print = (value: string) => process.stdout.write(value.endsWith('\n') ? value : `${value}\n`);

const onShutdown = (close: () => Promise<void>) => {
  let closing = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      close().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
    });
  }
};

export const buildCli = (): Command => {
  const program = new Command('ctx')
    .description('Context Ledger: an event-sourced context engine for AI agents')
    .version(PRODUCT.version)
    .addOption(new Option('-c, --config <file>', 'a ctx.toml file'))
    .addOption(new Option('-d, --data-dir <dir>', 'embedded data directory (default ./.ctx)'))
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('serve HTTP (the tool API, /health) and MCP at /mcp; `ctx serve mcp` is the same')
    .argument('[surface]', 'accepted for compatibility: `mcp`')
    .option('-b, --bind <host:port>', 'address to listen on (default 127.0.0.1:7331)')
    .action(async (_surface: string | undefined, _options: object, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      const ledger = await openLedger(configFrom(options));
      try {
        const server = await startServer(ledger);
        onShutdown(server.close);
      } catch (error) {
        await ledger.close();
        throw error;
      }
    });

  program
    .command('mcp')
    .description('serve MCP over stdio, for desktop clients')
    .action(async (_options: object, command: Command) => {
      const config = configFrom(command.optsWithGlobals<GlobalOptions>());
      // stdout carries the protocol: logs go to stderr.
      const logger = pino({ level: config.log.level }, pino.destination(2));
      const ledger = await openLedger(config, { logger });
      await ledger.projections.start();
      const connection = serveStdio(() => ledger.createMcpServer({ subject: 'local', tenant: null, via: 'mcp' }));
      const close = async () => {
        await connection.close();
        await ledger.close();
      };
      process.stdin.on('end', () => void close().then(() => process.exit(0)));
      onShutdown(close);
    });

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
      const page = await withLedger(command.optsWithGlobals<GlobalOptions>(), (ledger) =>
        readHistory(ledger.store, {
          stream,
          types: options.type as never,
          since: options.since as string | undefined,
          until: options.until as string | undefined,
          limit: options.limit as number,
          cursor: options.cursor as string | undefined,
          direction: options.backwards ? 'backwards' : 'forwards',
        }),
      );
      print(options.json ? JSON.stringify(page, null, 2) : formatHistory(page));
    });

  const projections = program.command('projections').description('inspect and rebuild read models');
  projections
    .command('status')
    .description('checkpoint, lag and throughput of every projection')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const status = await withLedger(command.optsWithGlobals<GlobalOptions>(), (ledger) =>
        ledger.projections.status(),
      );
      print(options.json ? JSON.stringify(status, null, 2) : formatProjectionStatus(status));
    });
  projections
    .command('rebuild')
    .description('rebuild a projection from the first event into a shadow copy, then swap it in')
    .argument('<name>', 'projection name (see `ctx projections status`)')
    .action(async (name: string, _options: object, command: Command) => {
      const result = await withLedger(command.optsWithGlobals<GlobalOptions>(), (ledger) =>
        ledger.projections.rebuild(name, (p) => process.stderr.write(`\rrebuilding ${name}: ${p.processedEvents} events`)),
      );
      process.stderr.write('\n');
      print(`rebuilt ${name} from ${result.processedEvents} events`);
    });

  return program;
};

/** Exit codes: 0 success, 1 failure, 2 bad usage or configuration. */
export const runCli = async (argv: readonly string[]): Promise<number> => {
  try {
    await buildCli().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof AppError) {
      console.error(`ctx: ${error.message}`);
      return error.statusCode === 2 || error.statusCode === 400 ? 2 : 1;
    }
    console.error(`ctx: ${(error as Error).stack ?? String(error)}`);
    return 1;
  }
};

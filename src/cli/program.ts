import { Command, CommanderError, Option } from 'commander';
import { pino } from 'pino';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { loadConfig, type Config } from '../config.js';
import { AppError } from '../errors.js';
import { openLedger, startServer, PRODUCT } from '../main.js';
import { deploymentAccess } from '../mcp/server.js';
import type { WithLedger } from '../module.js';
import { MODULES } from '../modules/index.js';
import { migrateCli } from '../migration/migrateCli.js';
import { backupCli } from '../protection/backupCli.js';
import { modelCli } from './modelCli.js';

interface GlobalOptions {
  config?: string;
  dataDir?: string;
  bind?: string;
}

/** The configuration: file, then environment, then `settings` (flags written as environment overrides), then flags. */
const configOf = (command: Command, settings: NodeJS.ProcessEnv = {}): Config => {
  const options = command.optsWithGlobals<GlobalOptions>();
  return loadConfig({
    file: options.config,
    env: { ...process.env, ...settings },
    overrides: { storage: { dataDir: options.dataDir }, server: { bind: options.bind } },
  });
};

/** Opens the ledger for a one-shot command, logging only warnings, to stderr. */
const withLedger: WithLedger = async (command, work) => {
  const config = configOf(command);
  const logger = pino({ level: config.log.level === 'info' ? 'warn' : config.log.level }, pino.destination(2));
  const ledger = await openLedger(config, { logger });
  try {
    return await work(ledger);
  } finally {
    await ledger.close();
  }
};

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
      const ledger = await openLedger(configOf(command));
      try {
        const server = await startServer(ledger);
        onShutdown(() => server.close());
      } catch (error) {
        await ledger.close();
        throw error;
      }
    });

  program
    .command('mcp')
    .description('serve MCP over stdio, for desktop clients')
    .option('--toolsets <names>', 'only these tool groups, comma-separated (overrides mcp.toolsets)')
    .option('--read-only', 'hide every tool that writes (overrides mcp.read_only)')
    .action(async (options: { toolsets?: string; readOnly?: boolean }, command: Command) => {
      const config = configOf(command, {
        ...(options.toolsets !== undefined ? { CTX_MCP__TOOLSETS: options.toolsets } : {}),
        ...(options.readOnly ? { CTX_MCP__READ_ONLY: 'true' } : {}),
      });
      // stdout carries the protocol: logs go to stderr.
      const ledger = await openLedger(config, { logger: pino({ level: config.log.level }, pino.destination(2)) });
      await ledger.start();
      const access = deploymentAccess(config.mcp);
      const connection = serveStdio(() => ledger.createMcpServer({ subject: 'local', tenant: null, via: 'mcp' }, access));
      const close = async () => {
        await connection.close();
        await ledger.close();
      };
      process.stdin.on('end', () => void close().then(() => process.exit(0)));
      onShutdown(close);
    });

  for (const module of MODULES) module.cli?.(program, withLedger);
  migrateCli(program, withLedger);
  backupCli(program, configOf);
  modelCli(program, configOf);
  return program;
};

/** Exit codes: 0 success, 1 failure, 2 bad usage, input or configuration. */
export const runCli = async (argv: readonly string[]): Promise<number> => {
  try {
    await buildCli().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof AppError) {
      console.error(`ctx: ${error.message}`);
      return error.statusCode === 2 || error.statusCode === 400 ? 2 : 1;
    }
    console.error(`ctx: ${(error as Error).stack ?? String(error)}`);
    return 1;
  }
};

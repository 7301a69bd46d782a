import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Argument, Command, CommanderError, Option } from 'commander';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { discoverConfigFile, loadConfig, type Config } from '../config.js';
import { configTemplate } from '../configTemplate.js';
import { AppError, ValidationError } from '../errors.js';
import { openLedger, startServer, PRODUCT } from '../main.js';
import { deploymentAccess } from '../mcp/server.js';
import type { WithLedger } from '../module.js';
import { MODULES } from '../modules/index.js';
import { migrateCli } from '../migration/migrateCli.js';
import { backupCli } from '../protection/backupCli.js';
import { cliLogger } from './logger.js';
import { modelCli } from './modelCli.js';
import { exitWhenStdoutCloses, print, printError } from './output.js';

interface GlobalOptions {
  config?: string;
  dataDir?: string;
  bind?: string;
}

/** The flag behind each setting a flag can set, so that a configuration error names it. */
const FLAGS = { 'storage.dataDir': '--data-dir', 'server.bind': '--bind', 'mcp.toolsets': '--toolsets', 'mcp.readOnly': '--read-only' };

/** The configuration: `--config` or `./ctx.toml`, then the environment, then flags (`settings`: a command's own). */
const configOf = (command: Command, settings: Record<string, Record<string, string | undefined>> = {}): Config => {
  const options = command.optsWithGlobals<GlobalOptions>();
  return loadConfig({
    file: options.config ?? discoverConfigFile(),
    env: process.env,
    overrides: { storage: { dataDir: options.dataDir }, server: { bind: options.bind }, ...settings },
    flags: FLAGS,
  });
};

/** Opens the ledger for a one-shot command, logging only warnings, to stderr. */
const withLedger: WithLedger = async (command, work) => {
  const config = configOf(command);
  const logger = cliLogger(config.log.level === 'info' ? 'warn' : config.log.level, 2);
  const ledger = await openLedger(config, { logger });
  try {
    return await work(ledger);
  } finally {
    await ledger.close();
  }
};

const onShutdown = (close: (signal: NodeJS.Signals) => Promise<void>) => {
  let closing = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      close(signal).then(
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
    .addOption(new Option('-c, --config <file>', 'a ctx.toml file (default: ./ctx.toml when there is one)'))
    .addOption(new Option('-d, --data-dir <dir>', 'embedded data directory (default ./.ctx)'))
    .showHelpAfterError()
    .exitOverride();

  program
    .command('init')
    .description('write a ctx.toml with every setting at its default, commented')
    .option('--force', 'replace an existing file')
    .action((options: { force?: boolean }, command: Command) => {
      const file = command.optsWithGlobals<GlobalOptions>().config ?? path.join(process.cwd(), 'ctx.toml');
      if (existsSync(file) && !options.force) throw new ValidationError(`${file} exists; --force replaces it`);
      writeFileSync(file, configTemplate());
      print(`wrote ${file}`);
    });

  program
    .command('serve')
    .description('serve HTTP (the tool API, REST API, admin console, /health) and MCP at /mcp')
    .addArgument(new Argument('[surface]', 'accepted for compatibility: `ctx serve mcp` is the same').choices(['mcp']))
    .option('-b, --bind <host:port>', 'address to listen on (default 127.0.0.1:7331)')
    .action(async (_surface: string | undefined, _options: object, command: Command) => {
      const config = configOf(command);
      const ledger = await openLedger(config, { logger: cliLogger(config.log.level, 1) });
      try {
        const server = await startServer(ledger);
        onShutdown(async (signal) => {
          ledger.logger.info({ signal }, 'Shutting down');
          await server.close();
          ledger.logger.info('Context Ledger stopped');
        });
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
        mcp: { toolsets: options.toolsets, readOnly: options.readOnly ? 'true' : undefined },
      });
      // stdout carries the protocol: logs go to stderr.
      const ledger = await openLedger(config, { logger: cliLogger(config.log.level, 2) });
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
  strict(program);
  return program;
};

/** Every command refuses arguments and options it does not declare (exit code 2). */
const strict = (command: Command): void => {
  command.allowExcessArguments(false).allowUnknownOption(false);
  for (const sub of command.commands) strict(sub);
};

/** Exit codes: 0 success, 1 failure, 2 bad usage, input or configuration. */
export const runCli = async (argv: readonly string[]): Promise<number> => {
  exitWhenStdoutCloses();
  try {
    await buildCli().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    printError(error);
    if (error instanceof AppError) return error.statusCode === 2 || error.statusCode === 400 ? 2 : 1;
    return 1;
  }
};

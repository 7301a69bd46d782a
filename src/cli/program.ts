import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Argument, Command, CommanderError, Option } from 'commander';
import { discoverConfigFile, loadConfig, type Config } from '../config.js';
import { CONFIG_FILE_NAME } from '../domain/ledgerFiles.js';
import { configTemplate } from '../configTemplate.js';
import { ValidationError } from '../errors.js';
import { ensureFreeAddress } from './freePort.js';
import { openLedger, startServer, PRODUCT, type Ledger } from '../main.js';
import { deploymentAccess } from '../mcp/access.js';
import type { WithLedger } from '../module.js';
import { MODULES } from '../modules/index.js';
import { migrateCli } from '../migration/migrateCli.js';
import { backupCli } from '../protection/backupCli.js';
import { cliLogger } from './logger.js';
import { localLedger } from './localLedger.js';
import { provenLocalServer } from './localServer.js';
import { modelCli } from './modelCli.js';
import { mountVerbs } from './operationVerbs.js';
import { reportError } from './cliErrors.js';
import { exitWhenStdoutCloses, print } from './output.js';
import { remoteLedger, type ServerAccess } from './remoteLedger.js';

interface GlobalOptions {
  config?: string;
  dataDir?: string;
  bind?: string;
  server?: string;
  apiKey?: string;
  token?: string;
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

/** The server to send operations to: the one named, or the one serving the data directory; null for none. */
const serverOf = async (command: Command): Promise<ServerAccess | null> => {
  const { server, apiKey, token } = command.optsWithGlobals<GlobalOptions>();
  const credentials = { ...(apiKey ? { apiKey } : {}), ...(token ? { token } : {}) };
  if (server) return { url: server, ...credentials };
  const url = await provenLocalServer(configOf(command));
  return url ? { url, ...credentials } : null;
};

/** Opens the ledger in this process for a one-shot command, logging only warnings, to stderr. */
const openForCommand = (command: Command): Promise<Ledger> => {
  const config = configOf(command);
  const logger = cliLogger(config.log.level === 'info' ? 'warn' : config.log.level, 2);
  return openLedger(config, { logger, oneShot: true });
};

/**
 * Runs a one-shot command through the server that holds the data directory (or the one named), or
 * else in this process with its projections running, as a server runs them, until it ends.
 */
const withLedger: WithLedger = async (command, work) => {
  const server = await serverOf(command);
  if (server) {
    const release = sayOnInterrupt(
      `the server at ${server.url} goes on with what it was sent; \`ctx sources\` and \`ctx jobs list\` show where it stands`,
    );
    try {
      return await work(remoteLedger(server));
    } finally {
      release();
    }
  }
  const ledger = await openForCommand(command);
  const release = sayOnInterrupt('what was stored stays stored; the same command run again goes on from there');
  try {
    await ledger.projections.start();
    return await work(localLedger(ledger));
  } finally {
    release();
    await ledger.close();
  }
};

/** Ctrl-C of a one-shot command says what became of its work, then exits as interrupted (130). */
const sayOnInterrupt = (outcome: string): (() => void) => {
  const interrupt = () => {
    process.stderr.write(`\nctx: interrupted: ${outcome}\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  return () => process.off('SIGINT', interrupt);
};

/** For commands that need the data directory itself (migrate): never through a server. */
const withOwnLedger = async <T>(command: Command, work: (ledger: Ledger) => Promise<T>): Promise<T> => {
  refuseServer(command);
  const ledger = await openForCommand(command);
  try {
    return await work(ledger);
  } finally {
    await ledger.close();
  }
};

/** Commands that work on the data directory itself say so when told to use a server. */
const refuseServer = (command: Command) => {
  const { server } = command.optsWithGlobals<GlobalOptions>();
  if (server) {
    throw new ValidationError(
      `ctx ${command.name()} works on the data directory itself, not through a server (--server or CTX_SERVER_URL is ${server}): ` +
        'stop the server, then run it where its data directory is, without --server',
    );
  }
};

/** How often a server checks that the process that started it is still there. */
const PARENT_CHECK_MS = 1_000;
/** Taken at start: a parent that dies while the server starts is noticed too. */
const STARTED_BY = process.ppid;

/**
 * A server stops cleanly on SIGINT, SIGTERM or SIGHUP, and when the process that started it (npx,
 * a desktop client) goes away without a word: then it is handed to another parent.
 */
const stopWithParent = (close: (signal: NodeJS.Signals | 'parent gone') => Promise<void>): (() => void) => {
  let closing = false;
  const stop = (signal: NodeJS.Signals | 'parent gone' = 'SIGTERM') => {
    if (closing) return;
    closing = true;
    clearInterval(watch);
    close(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  const watch = setInterval(() => {
    if (process.ppid !== STARTED_BY) stop('parent gone');
  }, PARENT_CHECK_MS);
  watch.unref();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  return stop;
};

export const buildCli = (): Command => {
  const program = new Command('ctx')
    .description('Context Ledger: an event-sourced context engine for AI agents')
    .version(PRODUCT.version)
    .addOption(new Option('-c, --config <file>', 'a ctx.toml file (default: ./ctx.toml when there is one)'))
    .addOption(new Option('-d, --data-dir <dir>', 'embedded data directory (default ./.ctx)'))
    .addOption(
      new Option('--server <url>', 'run commands through this server (default: the server holding the data directory)').env(
        'CTX_SERVER_URL',
      ),
    )
    .addOption(new Option('--api-key <key>', 'API key for a server with authentication on').env('CTX_API_KEY'))
    .addOption(new Option('--token <jwt>', 'bearer token for a server with authentication on').env('CTX_TOKEN'))
    .showHelpAfterError()
    // Commands come from the program, the modules and the operations' declared verbs: help lists them by name.
    .configureHelp({ sortSubcommands: true })
    .exitOverride();

  program
    .command('init')
    .description('write a ctx.toml with every setting at its default, commented')
    .option('--force', 'replace an existing file')
    .action((options: { force?: boolean }, command: Command) => {
      const file = command.optsWithGlobals<GlobalOptions>().config ?? path.join(process.cwd(), CONFIG_FILE_NAME);
      if (existsSync(file) && !options.force) throw new ValidationError(`${file} exists; --force replaces it`);
      try {
        writeFileSync(file, configTemplate());
      } catch (error) {
        throw new ValidationError(`Cannot write ${file}: ${(error as Error).message}`);
      }
      print(`wrote ${file}`);
    });

  program
    .command('serve')
    .description('serve HTTP (the tool API, REST API, admin console, /health) and MCP at /mcp')
    .addArgument(new Argument('[surface]', 'accepted for compatibility: `ctx serve mcp` is the same').choices(['mcp']))
    .option('-b, --bind <host:port>', 'address to listen on (default 127.0.0.1:7331)')
    .action(async (_surface: string | undefined, _options: object, command: Command) => {
      const config = configOf(command);
      await ensureFreeAddress(config.server.bind);
      const ledger = await openLedger(config, { logger: cliLogger(config.log.level, 1) });
      try {
        const server = await startServer(ledger);
        stopWithParent(async (signal) => {
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
    .description('serve MCP over stdio, for desktop clients (through the running server when one holds the data directory)')
    .option('--toolsets <names>', 'only these tool groups, comma-separated (overrides mcp.toolsets)')
    .option('--read-only', 'hide every tool that writes (overrides mcp.read_only)')
    .action(async (options: { toolsets?: string; readOnly?: boolean }, command: Command) => {
      const server = await serverOf(command);
      if (server) {
        if (options.toolsets || options.readOnly)
          process.stderr.write(`ctx mcp: relaying to the server at ${server.url}, whose own [mcp] settings decide the tools\n`);
        const { relayStdioTo } = await import('./mcpBridge.js');
        const relay = await relayStdioTo(server);
        const stop = stopWithParent(() => relay.close());
        process.stdin.on('end', () => stop());
        process.stdin.on('close', () => stop());
        return;
      }
      const config = configOf(command, {
        // The embedded database has one holder: it also answers the CLI beside it, on a loopback port of its own.
        server: { bind: '127.0.0.1:0' },
        mcp: { toolsets: options.toolsets, readOnly: options.readOnly ? 'true' : undefined },
      });
      // stdout carries the protocol: logs go to stderr.
      const ledger = await openLedger(config, { logger: cliLogger(config.log.level, 2) });
      const http = config.storage.postgresUrl ? null : await startServer(ledger);
      if (!http) await ledger.start();
      const access = deploymentAccess(config.mcp);
      const [{ serveStdio }, createMcpServer] = await Promise.all([import('@modelcontextprotocol/server/stdio'), ledger.mcpServers()]);
      const connection = serveStdio(() => createMcpServer({ subject: 'local', tenant: null, via: 'mcp' }, access));
      const stop = stopWithParent(async () => {
        await connection.close();
        await (http ? http.close() : ledger.close());
      });
      process.stdin.on('end', () => stop());
      process.stdin.on('close', () => stop());
    });

  for (const module of MODULES)
    for (const [group, description] of Object.entries(module.commandGroups ?? {}))
      program.command(group).description(description);
  mountVerbs(program, MODULES.flatMap((module) => module.surfaces ?? []), withLedger);
  migrateCli(program, withOwnLedger);
  backupCli(program, (command) => {
    refuseServer(command);
    return configOf(command);
  });
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
    return reportError(error);
  }
};

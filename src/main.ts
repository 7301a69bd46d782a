import path from 'node:path';
import { pino, type Logger as PinoLogger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { connectPostgres, type Database } from '../infra/postgres/database.js';
import { openPgliteThread } from '../infra/postgres/threadedPglite.js';
import { createAdvisoryLocks } from '../infra/postgres/advisoryLocks.js';
import { advertiseServer, dataDirHolder, lockDataDir, type DataDirHolder } from '../infra/postgres/dataDirLock.js';
import { newSecret } from '../infra/crypto/serverProof.js';
import { keepDataDirPrivate } from '../infra/postgres/privateFiles.js';
import { postgresReadModels } from '../infra/postgres/documentReadModels.js';
import { createPostgresContentStore } from '../infra/postgres/postgresContentStore.js';
import { createPostgresEventStore } from '../infra/eventstore/postgresEventStore.js';
import { createPostgresKeyring, hasDataKeys } from '../infra/postgres/postgresKeyring.js';
import { checkPostgresExtensions } from '../infra/deploy/postgresExtensions.js';
import { embeddingActivity } from '../infra/embeddings/embeddingActivity.js';
import { jobsProjection } from '../projections/jobs/jobs.js';
import { ConfigError, isLoopbackBind, type Config } from './config.js';
import { DATABASE_DIR } from './domain/ledgerFiles.js';
import { createProjectionRunner, type ProjectionRunner } from './engine/projectionRunner.js';
import { NotFoundError } from './errors.js';
import { onFirstUse } from './engine/onFirstUse.js';
import { createSecretBox, ensureSecretsKeyFile } from '../infra/crypto/secretBox.js';
import type { McpServerFactory } from './mcp/server.js';
import type { FeatureApis, LedgerModule, ModuleContext, ModuleParts } from './module.js';
import { operationNamed, type Operation } from './operations.js';
import { MODULES } from './modules/index.js';
import { countAppends } from './observability/countAppends.js';
import { createLedgerMetrics, type LedgerMetrics } from './observability/ledgerMetrics.js';
import type { EventStore } from './ports/eventStore.js';
import { soleReplica } from './ports/replicaLocks.js';

/** A one-shot command waits this long at most for the read models (embedding a large tree takes a while). */
const CATCH_UP_TIMEOUT_MS = 60 * 60_000;

export const PRODUCT = { name: 'context-ledger', version: '0.1.0' } as const;

/** Everything a transport needs, built once from validated config. */
export interface Ledger extends Omit<ModuleContext, 'projections'> {
  projections: ProjectionRunner;
  /**
   * Runs the projections until every read model has applied every event written so far, the
   * semantic index included unless `embeddings: false` leaves it to catch up on its own.
   */
  catchUp(options?: { embeddings?: boolean }): Promise<void>;
  operation(name: string): Operation;
  parts: readonly ModuleParts[];
  /** What builds an MCP server for each caller; the first call loads the MCP SDK, and only a process serving MCP makes it. */
  mcpServers(): Promise<McpServerFactory>;
  metrics: LedgerMetrics;
  /** Starts projections and every module's background work. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenLedgerOptions {
  logger?: PinoLogger;
  modules?: readonly LedgerModule[];
  /** For one command, then closed: a read model built by an older version is served, not rebuilt. */
  oneShot?: boolean;
}

// The embedded database runs in its own thread, so its statements never hold the one that answers requests.
const openDatabase = async (config: Config): Promise<Database> =>
  config.storage.postgresUrl
    ? connectPostgres(config.storage.postgresUrl)
    : openPgliteThread(path.join(config.storage.dataDir, DATABASE_DIR));

/** The configured event store; EventStoreDB's client (gRPC and all) is loaded only when it is the one. */
const openEventStore = async (config: Config, db: Database): Promise<EventStore> => {
  if (config.storage.eventStore !== 'eventstoredb') return createPostgresEventStore(db);
  const { connectEsdb, createEsdbEventStore } = await import('../infra/eventstore/esdbEventStore.js');
  return createEsdbEventStore(connectEsdb(config.storage.eventstoreUrl!));
};

/**
 * What serving takes beyond the ledger (fastify and the routes, the MCP SDK): loaded by
 * `startServer`, not by one-shot commands. A ledger opened to serve starts loading it at once, while
 * its database opens.
 */
const servingStack = onFirstUse(async () => {
  const [app, serverProof, metricsRoute, mcp] = await Promise.all([
    import('./http/app.js'),
    import('./http/serverProof.js'),
    import('./observability/metricsRoute.js'),
    import('./mcp/server.js'),
  ]);
  return {
    buildApp: app.buildApp,
    mountServerProof: serverProof.mountServerProof,
    mountMetrics: metricsRoute.mountMetrics,
    createMcpServerFactory: mcp.createMcpServerFactory,
  };
});

/** The composition root: opens the stores, then lets every module wire itself in. */
export const openLedger = async (config: Config, options: OpenLedgerOptions = {}): Promise<Ledger> => {
  const logger = options.logger ?? pino({ level: config.log.level });
  const lock = config.storage.postgresUrl ? null : lockDataDir(config.storage.dataDir);
  let db: Database | undefined;
  // Replicas on one server share its projections and jobs; the embedded database has one process.
  const replicaLocks = config.storage.postgresUrl ? createAdvisoryLocks(config.storage.postgresUrl, logger) : soleReplica;
  const parts: ModuleParts[] = [];
  // Its failure, if any, is startServer's to report.
  if (!options.oneShot) servingStack().catch(() => undefined);
  try {
    db = await openDatabase(config);
    // The embedded database has just made its files, readable by all.
    if (!config.storage.postgresUrl) keepDataDirPrivate(config.storage.dataDir);
    const missing = await checkPostgresExtensions(db, {
      keywordIndex: config.search.keywordIndex,
      embeddingsProvider: config.embeddings.provider,
    });
    if (missing.length > 0) throw new ConfigError(missing);
    const opened = db;
    await ensureSecretsKeyFile(config, () => hasDataKeys(opened));
    const metrics = createLedgerMetrics();
    const store = countAppends(await openEventStore(config, db), metrics.eventsAppended);
    let operations: Operation[] = [];
    let features: FeatureApis = {};
    const secrets = createSecretBox(config);
    const context: ModuleContext = {
      config,
      logger,
      db,
      store,
      readModels: postgresReadModels(db),
      replicaLocks,
      content: await createPostgresContentStore(db),
      secrets,
      keyring: await createPostgresKeyring(db, secrets),
      // The runner is made once every module has given its projections; these closures run later.
      waitForProjections: (position, timeoutMs) => projections.waitFor(position, { timeoutMs }),
      operations: () => operations,
      features: () => features,
      projections: () => projections,
    };
    for (const module of options.modules ?? MODULES) parts.push(await module.setup(context));
    const projections = createProjectionRunner(
      store,
      parts.flatMap((p) => p.projections ?? []),
      { batchSize: config.projections.batchSize, logger, locks: replicaLocks, rebuildsOnVersionChange: !options.oneShot },
    );
    operations = parts.flatMap((p) => p.operations ?? []);
    features = parts.reduce<FeatureApis>((all, p) => ({ ...all, ...p.api }), {});
    const runsJobs = parts.some((p) => p.projections?.some((x) => x.name === jobsProjection.name));
    metrics.observe({
      projections,
      jobsByStatus: runsJobs ? () => context.readModels.count(jobsProjection.name, 'status') : null,
      embedding: () => embeddingActivity,
    });
    const database = db;
    return {
      ...context,
      projections,
      parts,
      metrics,
      operation: (name) => {
        const found = operationNamed(operations, name);
        if (!found) throw new NotFoundError(`No operation named '${name}'`);
        return found;
      },
      mcpServers: onFirstUse(async () => {
        const [{ createMcpServerFactory }, extensions] = await Promise.all([
          servingStack(),
          Promise.all(parts.flatMap((part) => (part.mcp ? [part.mcp()] : []))),
        ]);
        return createMcpServerFactory({
          ...PRODUCT,
          operations,
          logger,
          extend: (server, actor, scopes) => extensions.forEach((extend) => extend(server, actor, scopes)),
        });
      }),
      catchUp: async ({ embeddings = true } = {}) => {
        await projections.start();
        await projections.waitFor(await store.headPosition(), {
          timeoutMs: CATCH_UP_TIMEOUT_MS,
          ...(embeddings ? { all: true as const } : {}),
        });
      },
      start: async () => {
        await projections.start();
        for (const part of parts) await part.start?.();
      },
      close: async () => {
        // Projections stop taking batches first; closing the modules (the embedder among them) then
        // ends a batch still embedding, rather than waiting for the whole of it.
        const stopping = projections.stop();
        for (const part of [...parts].reverse()) await part.close?.();
        await stopping;
        await replicaLocks.close();
        await store.close();
        await database.close();
        lock?.release();
      },
    };
  } catch (error) {
    for (const part of parts) await part.close?.().catch(() => undefined);
    await replicaLocks.close();
    await db?.close().catch(() => undefined);
    lock?.release();
    throw error;
  }
};

/** The process that holds this configuration's data directory, and the server it runs; null when none holds it. */
export const dataDirHolderOf = (config: Config): DataDirHolder | null =>
  config.storage.postgresUrl ? null : dataDirHolder(config.storage.dataDir);

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Drains HTTP, stops background work and projections, closes the database. */
  close(): Promise<void>;
}

export const startServer = async (ledger: Ledger): Promise<RunningServer> => {
  const [{ buildApp, mountServerProof, mountMetrics }, createMcpServer] = await Promise.all([
    servingStack(),
    ledger.mcpServers(),
  ]);
  const app = await buildApp({
    logger: ledger.logger,
    bodyLimitBytes: ledger.config.server.bodyLimitBytes,
    createMcpServer,
    browsers: ledger.config.server,
    rateLimits: ledger.config.server,
  });
  mountMetrics(app, ledger.metrics);
  const secret = newSecret();
  if (!ledger.config.storage.postgresUrl) mountServerProof(app, secret);
  for (const part of ledger.parts) await part.routes?.(app);
  await ledger.start();
  const [host, port] = ledger.config.server.bind.split(':') as [string, string];
  await app.listen({ host, port: Number(port) });
  const address = app.server.address();
  const listeningPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host}:${listeningPort}`;
  // The CLI beside the server reaches it on loopback, whatever address it listens on.
  const unadvertise = ledger.config.storage.postgresUrl
    ? () => undefined
    : advertiseServer(ledger.config.storage.dataDir, {
        url: url.replace(/\/\/(0\.0\.0\.0|\[?::\]?):/, '//127.0.0.1:'),
        secret,
      });
  // Bound beyond loopback, the server answers only to the names in server.allowed_hosts: its
  // address in the URL would be refused, so the URL people are given names the first of them.
  const { bind, allowedHosts } = ledger.config.server;
  const name = isLoopbackBind(bind) || allowedHosts.includes(host) ? host : allowedHosts[0]!;
  const named = `http://${name}:${listeningPort}`;
  const urls = { url: named, mcp: `${named}/mcp`, admin: `${named}/admin` };
  const listening = name === host ? '' : `, listening on ${host}:${listeningPort}`;
  ledger.logger.info(urls, `Context Ledger is serving on ${urls.url} (MCP ${urls.mcp}, admin console ${urls.admin}${listening})`);
  return {
    app,
    url,
    close: async () => {
      unadvertise();
      await app.close();
      await ledger.close();
    },
  };
};

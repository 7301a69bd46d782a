import path from 'node:path';
import { pino, type Logger as PinoLogger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { connectPostgres, openPglite, type Database } from '../infra/postgres/database.js';
import { lockDataDir } from '../infra/postgres/dataDirLock.js';
import { postgresDocumentProjection, postgresReadModels } from '../infra/postgres/documentReadModels.js';
import { createPostgresEventStore } from '../infra/eventstore/postgresEventStore.js';
import { streamSummaries } from '../projections/streamSummaries.js';
import { readHistoryOperation } from '../queries/readHistory.js';
import type { Config } from './config.js';
import { createProjectionRunner, type ProjectionRunner } from './engine/projectionRunner.js';
import { buildApp } from './http/app.js';
import { createMcpServerFactory } from './mcp/server.js';
import type { Operation } from './operations.js';
import type { EventStore } from './ports/eventStore.js';
import type { ReadModels } from './ports/projections.js';

export const PRODUCT = { name: 'context-ledger', version: '0.1.0' } as const;

/** Everything a transport needs, built once from validated config. */
export interface Ledger {
  config: Config;
  logger: PinoLogger;
  db: Database;
  store: EventStore;
  readModels: ReadModels;
  projections: ProjectionRunner;
  operations: readonly Operation[];
  createMcpServer: ReturnType<typeof createMcpServerFactory>;
  close(): Promise<void>;
}

export interface OpenLedgerOptions {
  logger?: PinoLogger;
}

/** The composition root: opens the stores, wires projections and operations. */
export const openLedger = async (config: Config, options: OpenLedgerOptions = {}): Promise<Ledger> => {
  const logger = options.logger ?? pino({ level: config.log.level });
  const lock = config.storage.postgresUrl ? null : lockDataDir(config.storage.dataDir);
  let db: Database | undefined;
  try {
    db = config.storage.postgresUrl
      ? connectPostgres(config.storage.postgresUrl)
      : await openPglite(path.join(config.storage.dataDir, 'pgdata'));
    const store = await createPostgresEventStore(db);
    const projections = createProjectionRunner(store, [await postgresDocumentProjection(db, streamSummaries)], {
      batchSize: config.projections.batchSize,
      logger,
    });
    const operations = [readHistoryOperation(store)];
    const database = db;
    return {
      config,
      logger,
      db,
      store,
      readModels: postgresReadModels(db),
      projections,
      operations,
      createMcpServer: createMcpServerFactory({ ...PRODUCT, operations, logger }),
      close: async () => {
        await projections.stop();
        await store.close();
        await database.close();
        lock?.release();
      },
    };
  } catch (error) {
    await db?.close().catch(() => undefined);
    lock?.release();
    throw error;
  }
};

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Drains HTTP, stops the projection runners, closes the database. */
  close(): Promise<void>;
}

export const startServer = async (ledger: Ledger): Promise<RunningServer> => {
  const app = await buildApp({
    logger: ledger.logger,
    bodyLimitBytes: ledger.config.server.bodyLimitBytes,
    createMcpServer: ledger.createMcpServer,
  });
  await ledger.projections.start();
  const [host, port] = ledger.config.server.bind.split(':') as [string, string];
  await app.listen({ host, port: Number(port) });
  const address = app.server.address();
  const url = `http://${host}:${typeof address === 'object' && address ? address.port : port}`;
  ledger.logger.info({ url, mcp: `${url}/mcp` }, 'Context Ledger is serving');
  return {
    app,
    url,
    close: async () => {
      await app.close();
      await ledger.close();
    },
  };
};

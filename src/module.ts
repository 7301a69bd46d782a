import type { McpServer } from '@modelcontextprotocol/server';
import type { cancelJobOperation } from '../commands/jobs/cancelJob.js';
import type { ingestDocumentsOperation } from '../commands/search/ingestDocuments.js';
import type { startIndexingOperation } from '../commands/jobs/startIndexing.js';
import type { syncConnectorOperation } from '../commands/jobs/syncConnector.js';
import type { getJobStatusOperation } from '../queries/jobs/getJobStatus.js';
import type { indexStatusOperation } from '../queries/jobs/indexStatus.js';
import type { listBackgroundJobsOperation } from '../queries/jobs/listBackgroundJobs.js';
import type { getDocumentOperation } from '../queries/search/getDocument.js';
import type { listChunksOperation } from '../queries/search/listChunks.js';
import type { listSourcesOperation } from '../queries/search/listSources.js';
import type { searchOperation } from '../queries/search/searchDocuments.js';
import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import type { Config } from './config.js';
import type { ProjectionRunner } from './engine/projectionRunner.js';
import type { Actor } from './domain/metadata.js';
import type { Position } from './domain/position.js';
import type { Operation, OperationContext, OperationSurfaces } from './operations.js';
import type { ContentStore } from './ports/contentStore.js';
import type { Database } from './ports/database.js';
import type { EventStore } from './ports/eventStore.js';
import type { Keyring } from './ports/keyring.js';
import type { SecretBox } from './ports/secretBox.js';
import type { ReadModels, RunnableProjection } from './ports/projections.js';
import type { ReplicaLocks } from './ports/replicaLocks.js';
import type { RuntimeSettings } from './ports/runtimeSettings.js';

/** What a module can use while it wires itself in. */
export interface ModuleContext {
  config: Config;
  logger: PinoLogger;
  db: Database;
  store: EventStore;
  readModels: ReadModels;
  /** What one replica at a time may run, when several serve one database. */
  replicaLocks: ReplicaLocks;
  /** The ledger's one content store, secret box and keyring: every module shares them. */
  content: ContentStore;
  secrets: SecretBox;
  keyring: Keyring;
  /**
   * Resolves once every projection but the semantic index has applied the event at `position`
   * (read-your-writes); the projection runner's `waitFor` names others, or all of them.
   */
  waitForProjections: (position: Position, timeoutMs?: number) => Promise<void>;
  /** Every operation of the ledger, once all modules are set up: what surfaces mount. */
  operations: () => readonly Operation[];
  /** What the other features offer, typed, once all modules are set up: how modules use each other. */
  features: () => FeatureApis;
  /** The projection runner, once all modules are set up (status, rebuilds). */
  projections: () => ProjectionRunner;
}

/** What the search feature offers the others: its operations, with their input and output types. */
export interface SearchApi {
  /** Ranks chunks for a query: the `search` operation. */
  rank: ReturnType<typeof searchOperation>;
  /** Ingests a batch of documents of one source. */
  ingest: ReturnType<typeof ingestDocumentsOperation>;
  /** The chunks of documents, or of a query's matches. */
  chunks: ReturnType<typeof listChunksOperation>;
  /** A document by id, and the sources: what scripts' context tools answer beside `rank`. */
  get: ReturnType<typeof getDocumentOperation>;
  sources: ReturnType<typeof listSourcesOperation>;
  /** Why the keyword index cannot be searched now (its server down, say), or undefined when it can. */
  keywordIndexProblem(): Promise<string | undefined>;
}

/** What the jobs feature offers the others: its operations, with their input and output types. */
export interface JobsApi {
  start: ReturnType<typeof startIndexingOperation>;
  status: ReturnType<typeof getJobStatusOperation>;
  list: ReturnType<typeof listBackgroundJobsOperation>;
  cancel: ReturnType<typeof cancelJobOperation>;
  sync: ReturnType<typeof syncConnectorOperation>;
  /** The project's current indexing job and its last completed one. */
  indexStatus: ReturnType<typeof indexStatusOperation>;
}

/** What the settings feature offers the others: the settings in force, the deployment's and a tenant's. */
export type SettingsApi = Pick<RuntimeSettings, 'current' | 'forTenant'>;

/** What the access feature offers the others: how the REST API it guards has performed over the last minute. */
export interface AccessApi {
  performance(): { avgQueryLatencyMs: number; queriesPerMinute: number; errorRate: number };
}

/** Each feature's API, present when its module is part of the deployment. */
export interface FeatureApis {
  search?: SearchApi;
  jobs?: JobsApi;
  settings?: SettingsApi;
  access?: AccessApi;
}

/** Adds to an MCP server what is not an operation, for a caller with these scopes (null: all). */
export type McpExtension = (server: McpServer, actor: Actor, scopes: readonly string[] | null) => void;

export interface ModuleParts {
  projections?: RunnableProjection[];
  operations?: Operation[];
  /** What this module offers the others (its key of `FeatureApis`). */
  api?: FeatureApis;
  /** Routes beyond the generic ones, for surfaces with their own shapes. */
  routes?(app: FastifyInstance): void | Promise<void>;
  /**
   * Loads what this module adds to each MCP server beyond the operations' tools (e.g. prompts,
   * resources): called by the processes that serve MCP, so that the others never load its SDK.
   */
  mcp?(): Promise<McpExtension>;
  /** Background work that runs while the server does (e.g. a process manager). */
  start?(): Promise<void>;
  close?(): Promise<void>;
}

/** Runs a one-shot CLI command: in this process, or through the server that holds the data directory. */
export type WithLedger = <T>(command: Command, work: (ledger: LedgerHandle) => Promise<T>) => Promise<T>;

/** What a catch-up is waiting for: the read model furthest behind, and how many events it has left. */
export interface CatchUpWait {
  projection: string;
  events: number;
}

/** What a CLI command works with: the operations of the catalogue, run as the CLI's caller. */
export interface LedgerHandle {
  /** The URL of the server that runs the operations; null when they run in this process. */
  server: string | null;
  /** Runs an operation by name; progress is reported only when it runs in this process. */
  run<T = Record<string, unknown>>(name: string, input: unknown, extra?: Pick<OperationContext, 'onProgress'>): Promise<T>;
  /**
   * Waits until the read models named (every one but the semantic index without names) have applied
   * every event written so far, telling `onWaiting` what it waits for while it does. In this process
   * they start from where the last process left them; a server keeps its own current.
   */
  catchUp(names?: readonly string[], onWaiting?: (waiting: CatchUpWait) => void): Promise<void>;
  /** Runs the ledger's background work (indexing jobs) here as a server does, when the operations run in this process. */
  startWork(): Promise<void>;
}

/** A feature of the ledger: its read models, operations, routes and CLI verbs, wired in one place. */
export interface LedgerModule {
  name: string;
  setup(context: ModuleContext): Promise<ModuleParts>;
  /**
   * What its operations show each surface, known before any ledger opens (the CLI's verbs). Every
   * operation with a route or a verb is listed, and its `setup` gives it with the same surfaces.
   */
  surfaces?: readonly OperationSurfaces[];
  /** Descriptions of the command groups its verbs make (`annotations`). */
  commandGroups?: Readonly<Record<string, string>>;
}

import { z } from 'zod';
import type { ConnectorEventSchemas, ConnectorSyncEventSchemas } from '../../src/domain/connectors.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import { DuplicateJobError, isTerminal } from '../../src/domain/jobs.js';
import type { JobStatusResponse } from '../../src/services/jobResponses.js';
import { handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { NotFoundError, ValidationError } from '../../src/errors.js';
import { defineOperation, type CliOtherwise, type OperationSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { JobRunner } from '../../src/ports/jobRunner.js';
import type { RemoteSource, SyncCursor } from '../../src/ports/remoteSource.js';
import { requestJob } from './startIndexing.js';

type ConnectorEvent = z.infer<(typeof ConnectorEventSchemas)[number] | (typeof ConnectorSyncEventSchemas)[number]>;

/** A sync job's `repoPath`: the connector it syncs, in the jobs' own vocabulary. */
export const SYNC_JOB_PREFIX = 'connector:';
export const syncJobPath = (connectorId: string) => `${SYNC_JOB_PREFIX}${connectorId}`;
export const connectorOfSyncJob = (repoPath: string): string | null =>
  repoPath.startsWith(SYNC_JOB_PREFIX) ? repoPath.slice(SYNC_JOB_PREFIX.length) : null;

/** A connector as its stream tells it, with where its next sync starts. */
export interface ConnectorSyncState {
  exists: boolean;
  removed: boolean;
  name: string;
  kind: string;
  /** As stored: secrets sealed. */
  settings: Record<string, unknown>;
  cursor: SyncCursor | null;
}

export type SyncStep =
  | { kind: 'checkpoint'; connectorId: string; jobId: string; cursor: SyncCursor }
  | {
      kind: 'complete';
      connectorId: string;
      jobId: string;
      cursor: SyncCursor;
      itemsSeen: number;
      documentsChanged: number;
      documentsRemoved: number;
    }
  | { kind: 'fail'; connectorId: string; jobId: string; code: string; message: string };

export const connectorSyncDecider: Decider<ConnectorSyncState, SyncStep, ConnectorEvent> = {
  initialState: () => ({ exists: false, removed: false, name: '', kind: '', settings: {}, cursor: null }),
  evolve: (state, stored: StoredEvent<ConnectorEvent>) => {
    const event = stored;
    switch (event.type) {
      case 'ConnectorAdded':
        return { ...state, exists: true, name: event.data.name, kind: event.data.kind, settings: event.data.settings };
      case 'ConnectorUpdated':
        return { ...state, name: event.data.name ?? state.name, settings: event.data.settings ?? state.settings };
      case 'ConnectorRemoved':
        return { ...state, removed: true };
      case 'ConnectorSyncCheckpointed':
      case 'ConnectorSyncCompleted':
        return { ...state, cursor: event.data.cursor };
      case 'ConnectorSyncFailed':
        return state;
      default: {
        const never: never = event;
        return never;
      }
    }
  },
  decide: (step, state) => {
    if (!state.exists || state.removed) throw new NotFoundError(`No connector with id ${step.connectorId}`);
    const { connectorId, jobId } = step;
    switch (step.kind) {
      case 'checkpoint':
        // An unchanged cursor (nothing new upstream) appends nothing.
        if (JSON.stringify(step.cursor) === JSON.stringify(state.cursor)) return [];
        return [{ type: 'ConnectorSyncCheckpointed', schemaVersion: 1, data: { connectorId, jobId, cursor: step.cursor } }];
      case 'complete': {
        const { cursor, itemsSeen, documentsChanged, documentsRemoved } = step;
        return [
          {
            type: 'ConnectorSyncCompleted',
            schemaVersion: 1,
            data: { connectorId, jobId, cursor, itemsSeen, documentsChanged, documentsRemoved },
          },
        ];
      }
      case 'fail':
        return [{ type: 'ConnectorSyncFailed', schemaVersion: 1, data: { connectorId, jobId, code: step.code, message: step.message } }];
    }
  },
};

/** Records one step of a sync in the connector's stream. */
export const recordSyncStep = (store: EventStore, step: SyncStep, context: CommandContext) =>
  handleCommand(store, streamId('connector', step.connectorId), connectorSyncDecider, step, context, { retries: 3 });

export const SyncConnectorInputSchema = z.object({
  connector: z.string().trim().min(1).max(200).describe('The connector to sync: its id or its name'),
});

export const SyncConnectorOutputSchema = z.object({
  job_id: z.uuid(),
  connector_id: z.string(),
  status: z.enum(['pending', 'running']),
  message: z.string(),
});

export const syncConnectorSurfaces = {
  name: 'connectors.sync',
  rest: {
    method: 'POST',
    path: '/connectors/{id}/sync',
    params: { id: 'connector' },
    summary: 'Sync a remote connector as a background job',
    status: 202,
    rateClass: 'connectors',
  },
} as const satisfies OperationSurfaces;

type SyncStarted = z.infer<typeof SyncConnectorOutputSchema>;

/** `ctx sync NAME` for a remote connector: it starts the sync, then follows the job to its end. */
export const syncRemoteConnector = {
  operation: syncConnectorSurfaces.name,
  input: ({ name }: { name: string }) => ({ connector: name }),
  notFound: ({ name }: { name: string }) => `No Lua connector named '${name}', nor a remote connector with that name or id`,
  follow: {
    operation: 'get_job_status',
    input: (started: SyncStarted) => ({ job_id: started.job_id }),
    progress: (status: JobStatusResponse) => `${status.status}: ${status.progress_message}`,
    done: (status: JobStatusResponse) => isTerminal(status.status),
    failed: (status: JobStatusResponse) => status.status !== 'completed',
    shown: (status: JobStatusResponse, started: SyncStarted) => ({
      job_id: status.job_id,
      connector_id: started.connector_id,
      status: status.status,
      message: status.error_message ?? status.progress_message,
    }),
    print: { fields: { job: '{job_id}', connector: '{connector_id}', status: '{status}', message: '{message}' } },
  },
} as const satisfies CliOtherwise;

export interface SyncConnectorDeps {
  store: EventStore;
  /** The project's connector by id or name, settings as stored; null when there is none. */
  findConnector: (project: string, idOrName: string) => Promise<{ id: string; name: string; type: string; settings: Record<string, unknown> } | null>;
  /** The connector's remote source (its settings opened); null for kinds that are not remote; throws when a setting is missing. */
  openSource: (kind: string, settings: Record<string, unknown>) => RemoteSource | null;
  /** The jobs runner: who already syncs what, and where a new job goes. */
  runner: Pick<JobRunner, 'activeJobFor' | 'admit'>;
  /** As for start_indexing_background: the answer and the job's status agree. */
  statusSettled: () => Promise<void>;
}

/** Starts a background sync of a remote connector: a job like an indexing job, with its progress and cancel. */
export const syncConnectorOperation = ({ store, findConnector, openSource, runner, statusSettled }: SyncConnectorDeps) =>
  defineOperation({
    ...syncConnectorSurfaces,
    title: 'Sync a connector',
    description:
      'Fetches what changed in a remote connector (GitHub, …) since its last sync, as a background job; follow it with get_job_status, stop it with cancel_job.',
    toolset: 'jobs',
    writes: true,
    scope: 'connectors:write',
    input: SyncConnectorInputSchema,
    output: SyncConnectorOutputSchema,
    run: async (input, operation) => {
      const { project } = operation;
      const connector = await findConnector(project, input.connector);
      if (!connector) throw new NotFoundError(`No connector '${input.connector}'`);
      if (!openSource(connector.type, connector.settings))
        throw new ValidationError(
          `Connector '${connector.name}' is a ${connector.type} connector, not a remote service: index it with POST /index/start`,
          { field: 'connector' },
        );
      const repoPath = syncJobPath(connector.id);
      const duplicate = runner.activeJobFor(project, repoPath);
      if (duplicate)
        throw new DuplicateJobError(`Connector '${connector.name}' is already syncing: job ${duplicate.jobId}`, {
          job_id: duplicate.jobId,
          current_status: duplicate.status,
        });
      const { jobId, admission } = await requestJob({ store, runner, statusSettled }, operation, project, {
        repoPath,
        forceReindex: false,
        include: [],
        exclude: [],
      });
      return {
        job_id: jobId,
        connector_id: connector.id,
        status: admission.status,
        message:
          admission.status === 'running' ? 'Sync started' : `Sync queued at position ${admission.queuePosition}`,
      };
    },
  });

import { z } from 'zod';

/**
 * Connector settings as stored in events. Secrets never appear in clear: a secret value is kept
 * as `{ sealed: <ciphertext> }` by the command that records it.
 */
/** Connector types that fetch from a remote service (synced as jobs) rather than read local folders. */
export const REMOTE_CONNECTOR_TYPES: ReadonlySet<string> = new Set(['github', 'jira', 's3', 'slack']);

export const ConnectorSettingsSchema = z.record(z.string(), z.unknown());

export const ConnectorAddedSchema = z.object({
  type: z.literal('ConnectorAdded'),
  schemaVersion: z.literal(1),
  data: z.object({
    connectorId: z.uuid(),
    name: z.string().min(1),
    kind: z.string().min(1),
    settings: ConnectorSettingsSchema,
  }),
});

export const ConnectorUpdatedSchema = z.object({
  type: z.literal('ConnectorUpdated'),
  schemaVersion: z.literal(1),
  data: z.object({
    connectorId: z.uuid(),
    name: z.string().min(1).optional(),
    settings: ConnectorSettingsSchema.optional(),
  }),
});

export const ConnectorRemovedSchema = z.object({
  type: z.literal('ConnectorRemoved'),
  schemaVersion: z.literal(1),
  data: z.object({ connectorId: z.uuid() }),
});

export const ConnectorEventSchemas = [ConnectorAddedSchema, ConnectorUpdatedSchema, ConnectorRemovedSchema] as const;

/** Where a remote connector's next sync resumes: an updated-since time, a page token, an ETag; the connector's own shape. */
export const SyncCursorSchema = z.record(z.string(), z.unknown());

/** A page of a sync was written: the next sync (or a resumed one) starts from `cursor`. */
export const ConnectorSyncCheckpointedSchema = z.object({
  type: z.literal('ConnectorSyncCheckpointed'),
  schemaVersion: z.literal(1),
  data: z.object({ connectorId: z.uuid(), jobId: z.uuid(), cursor: SyncCursorSchema }),
});

export const ConnectorSyncCompletedSchema = z.object({
  type: z.literal('ConnectorSyncCompleted'),
  schemaVersion: z.literal(1),
  data: z.object({
    connectorId: z.uuid(),
    jobId: z.uuid(),
    cursor: SyncCursorSchema,
    itemsSeen: z.number().int().nonnegative(),
    documentsChanged: z.number().int().nonnegative(),
    documentsRemoved: z.number().int().nonnegative(),
  }),
});

/** The service refused or the settings are incomplete: `code` says which, the message says what to do. */
export const ConnectorSyncFailedSchema = z.object({
  type: z.literal('ConnectorSyncFailed'),
  schemaVersion: z.literal(1),
  data: z.object({ connectorId: z.uuid(), jobId: z.uuid(), code: z.string(), message: z.string() }),
});

export const ConnectorSyncEventSchemas = [
  ConnectorSyncCheckpointedSchema,
  ConnectorSyncCompletedSchema,
  ConnectorSyncFailedSchema,
] as const;

import { z } from 'zod';

/**
 * Connector settings as stored in events. Secrets never appear in clear: a secret value is kept
 * as `{ sealed: <ciphertext> }` by the command that records it.
 */
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

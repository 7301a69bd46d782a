import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { UUID_PATTERN } from './ids.js';
import { redactSecrets } from './secrets.js';
import { SettlingSchema } from './settling.js';

/** Connectors as `/api/v1` and `context.connector_management` take and show them (the REST API). */

const ConnectorSettings = z.record(z.string(), z.unknown());
export const ConnectorIdSchema = z.string().max(100);
export const ConnectorCreateSchema = z
  .object({
    type: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'type uses lowercase letters, digits, - and _'),
    name: z.string().trim().min(1).max(200),
    config: ConnectorSettings.default({}),
  })
  .strict();
const ConnectorChangeShape = {
  name: z.string().trim().min(1).max(200).optional(),
  config: ConnectorSettings.optional(),
};
const GIVE_A_CHANGE = 'give a name or a config to change';
export const ConnectorUpdateSchema = z
  .object(ConnectorChangeShape)
  .strict()
  .refine((v) => v.name !== undefined || v.config !== undefined, GIVE_A_CHANGE);
/** An update with the connector it changes. */
export const ConnectorUpdateInputSchema = z
  .object({ id: ConnectorIdSchema, ...ConnectorChangeShape })
  .strict()
  .refine((v) => v.name !== undefined || v.config !== undefined, GIVE_A_CHANGE);
export const ConnectorSchema = z.object({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  status: z.string(),
  last_sync: z.string().nullable(),
  created_at: z.string(),
  config: ConnectorSettings,
});
export const ConnectorDetailSchema = ConnectorSchema.extend({
  stats: z.object({ documents_indexed: z.number().int(), last_error: z.string().nullable() }),
});
export const ConnectorListSchema = z.object({ connectors: z.array(ConnectorSchema) });
export const ConnectorCreatedSchema = ConnectorSchema.pick({
  id: true,
  type: true,
  name: true,
  status: true,
  created_at: true,
}).extend({ settling: SettlingSchema.optional() });
export const ConnectorChangedSchema = z.object({
  id: z.string(),
  status: z.string(),
  message: z.string(),
  settling: SettlingSchema.optional(),
});

/** Ids are uuids; anything else names no connector. */
export const checkConnectorId = (id: string) => {
  if (!UUID_PATTERN.test(id)) throw new NotFoundError(`No connector with id ${id}`);
  return id;
};

/** Settings as shown: secrets never shown back. */
export const redactSettings = (settings: Record<string, unknown>) => redactSecrets(settings) as Record<string, unknown>;

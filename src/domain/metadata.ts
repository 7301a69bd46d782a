import { z } from 'zod';

export const TransportSchema = z.enum(['mcp', 'rest', 'tools', 'cli', 'job', 'system']);

export const ActorSchema = z.object({
  subject: z.string().min(1),
  tenant: z.string().nullable(),
  via: TransportSchema,
});
export type Actor = z.infer<typeof ActorSchema>;

/** Carried by every event: who, why, for which project, and when. */
export const EventMetadataSchema = z.object({
  eventId: z.uuid(),
  commandId: z.string().min(1),
  correlationId: z.string().min(1),
  causationId: z.string().nullable(),
  actor: ActorSchema,
  project: z.string().min(1),
  occurredAt: z.iso.datetime({ offset: true }),
});
export type EventMetadata = z.infer<typeof EventMetadataSchema>;

export const SYSTEM_ACTOR: Actor = { subject: 'system', tenant: null, via: 'system' };

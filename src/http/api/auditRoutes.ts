import { z } from 'zod';
import { auditEvents, EventTypesSchema } from '../../../queries/auditEvents.js';
import { streamAsOf } from '../../../queries/streamAsOf.js';
import type { StoredEvent } from '../../domain/events.js';
import { isPosition } from '../../domain/position.js';
import { AGGREGATE_NAMES } from '../../engine/aggregates.js';
import { AsOfSchema } from '../../engine/asOf.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { ApiCall, RouteHandler, RouteSpec } from './routeSpec.js';

export const AuditEventSchema = z.object({
  position: z.string().describe('Position in the global log; also the cursor and an as_of moment'),
  stream_id: z.string(),
  revision: z.number().int(),
  type: z.string(),
  schema_version: z.number().int(),
  occurred_at: z.string(),
  recorded_at: z.string(),
  actor: z.object({ subject: z.string(), tenant: z.string().nullable(), via: z.string() }),
  project: z.string(),
  command_id: z.string(),
  correlation_id: z.string(),
  causation_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});

const timestamp = z.iso.datetime({ offset: true });

export const AuditEventsQuerySchema = z
  .object({
    category: z.string().min(1).max(100).optional().describe('Stream category: the stream id before its first `-`'),
    type: z
      .union([z.string(), z.array(z.string())])
      .transform((value) => [value].flat().flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean))
      .pipe(EventTypesSchema)
      .optional()
      .describe('Event types: repeat the parameter or separate them with commas'),
    actor: z.string().min(1).max(500).optional().describe('Actor subject'),
    project: z.string().min(1).max(200).optional(),
    command_id: z.string().min(1).max(200).optional(),
    correlation_id: z.string().min(1).max(200).optional(),
    since: timestamp.optional().describe('Recorded at or after (ISO 8601)'),
    until: timestamp.optional().describe('Recorded at or before (ISO 8601)'),
    order: z.enum(['newest', 'oldest']).default('newest'),
    cursor: z.string().refine(isPosition, 'not a cursor returned by this endpoint').optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();

export const AuditEventsResponseSchema = z.object({
  events: z.array(AuditEventSchema),
  next_cursor: z.string().nullable(),
});

export const StreamParamsSchema = z.object({ stream_id: z.string().min(1).max(300) });
export const StreamQuerySchema = z
  .object({ as_of: AsOfSchema.optional().describe('A position or an ISO 8601 timestamp; now when omitted') })
  .strict();

export const StreamResponseSchema = z.object({
  stream_id: z.string(),
  aggregate: z.enum(AGGREGATE_NAMES).nullable(),
  as_of: z.string().nullable(),
  revision: z.number().int().nullable().describe('Revision of the last event by as_of'),
  state: z.record(z.string(), z.unknown()).nullable().describe('The aggregate as it was at as_of'),
  events: z.array(AuditEventSchema).describe('Every event of the stream, oldest first'),
});

export const AUDIT_ROUTE_SPECS = [
  {
    method: 'GET',
    url: '/audit/events',
    summary: 'Audit log: events across all streams, filtered, a page at a time',
    scope: 'admin',
    rateClass: 'admin',
    query: AuditEventsQuerySchema,
    status: 200,
    response: AuditEventsResponseSchema,
  },
  {
    method: 'GET',
    url: '/streams/{stream_id}',
    summary: "One stream's events and its aggregate as of a moment",
    scope: 'admin',
    rateClass: 'admin',
    params: StreamParamsSchema,
    query: StreamQuerySchema,
    status: 200,
    response: StreamResponseSchema,
  },
] as const satisfies readonly RouteSpec[];

const auditEventJson = (e: StoredEvent): z.infer<typeof AuditEventSchema> => ({
  position: e.position,
  stream_id: e.streamId,
  revision: Number(e.revision),
  type: e.type,
  schema_version: e.schemaVersion,
  occurred_at: e.metadata.occurredAt,
  recorded_at: e.recordedAt,
  actor: e.metadata.actor,
  project: e.metadata.project,
  command_id: e.metadata.commandId,
  correlation_id: e.metadata.correlationId,
  causation_id: e.metadata.causationId,
  data: e.data,
});

/** A caller with a tenant sees only its project; an open deployment's caller sees everything. */
const visibleProject = ({ principal }: ApiCall): string | undefined =>
  principal && principal.method !== 'open' ? principal.tenant : undefined;

type AuditQuery = z.output<typeof AuditEventsQuerySchema>;

export const auditHandlers = (
  store: EventStore,
): Record<`${(typeof AUDIT_ROUTE_SPECS)[number]['method']} ${(typeof AUDIT_ROUTE_SPECS)[number]['url']}`, RouteHandler> => ({
  'GET /audit/events': async (call) => {
    const query = call.query as AuditQuery;
    const page = await auditEvents(
      store,
      {
        category: query.category,
        types: query.type,
        actor: query.actor,
        project: query.project,
        commandId: query.command_id,
        correlationId: query.correlation_id,
        since: query.since,
        until: query.until,
        order: query.order,
        cursor: query.cursor,
        limit: query.limit,
      },
      visibleProject(call),
    );
    return { events: page.events.map(auditEventJson), next_cursor: page.nextCursor };
  },
  'GET /streams/{stream_id}': async (call) => {
    const asOf = call.query.as_of as string | undefined;
    const view = await streamAsOf(store, call.params.stream_id as string, asOf, visibleProject(call));
    return {
      stream_id: view.streamId,
      aggregate: view.aggregate,
      as_of: asOf ?? null,
      revision: view.revision === null ? null : Number(view.revision),
      state: view.state,
      events: view.events.map(auditEventJson),
    };
  },
});

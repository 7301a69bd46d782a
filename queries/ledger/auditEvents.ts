import { z } from 'zod';
import { Instant } from '../../src/domain/instant.js';
import { EVENT_TYPES, STREAM_CATEGORIES, type EventType, type StoredEvent } from '../../src/domain/events.js';
import { compactPosition, readPosition } from '../../src/domain/position.js';
import { defineOperation, type CliPrint, type OperationSurfaces, type RouteSurfaces } from '../../src/operations.js';
import { matchesAllFilter, type AllFilter, type EventStore } from '../../src/ports/eventStore.js';
import { parseInput } from '../../src/validation.js';

export const EventTypesSchema = z.array(z.enum(EVENT_TYPES as [EventType, ...EventType[]]));

export const AuditEventSchema = z.object({
  position: z.string(),
  streamId: z.string(),
  revision: z.number().int(),
  type: z.string(),
  schemaVersion: z.number().int(),
  occurredAt: z.string(),
  recordedAt: z.string(),
  actor: z.object({ subject: z.string(), tenant: z.string().nullable(), via: z.string() }),
  project: z.string(),
  commandId: z.string(),
  correlationId: z.string(),
  causationId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});
export type AuditEvent = z.infer<typeof AuditEventSchema>;

export const toAuditEvent = (e: StoredEvent): AuditEvent => ({
  position: e.position,
  streamId: e.streamId,
  revision: Number(e.revision),
  type: e.type,
  schemaVersion: e.schemaVersion,
  occurredAt: e.metadata.occurredAt,
  recordedAt: e.recordedAt,
  actor: e.metadata.actor,
  project: e.metadata.project,
  commandId: e.metadata.commandId,
  correlationId: e.metadata.correlationId,
  causationId: e.metadata.causationId,
  data: e.data,
});

export interface EventPageQuery {
  /** One stream; `$all` when omitted. */
  stream?: string;
  filter: AllFilter;
  direction: 'forwards' | 'backwards';
  /** The `nextCursor` of a previous page: a revision for a stream, a position for `$all`. */
  cursor?: string;
  limit: number;
}

export interface EventPage {
  events: StoredEvent[];
  nextCursor: string | null;
}

/** Work one call may do before it answers with what it has and a cursor to go on from. */
const SCAN_LIMIT = 10_000;

/**
 * A page of the events of one stream or of `$all`, oldest or newest first. The store filters
 * `$all` itself; a stream is read as it is and filtered here. A call that has scanned
 * `SCAN_LIMIT` events answers with what it found and a cursor to go on from.
 */
export const readEventPage = async (store: EventStore, query: EventPageQuery): Promise<EventPage> => {
  const { stream, filter, direction, limit } = query;
  const backwards = direction === 'backwards';
  const found: StoredEvent[] = [];
  let scanned = 0;
  let last: StoredEvent | undefined;
  let exhausted = false;
  let cursor = query.cursor;
  while (found.length < limit && scanned < SCAN_LIMIT) {
    const page = stream
      ? await store.readStream(stream, {
          direction,
          fromRevision: cursor === undefined ? undefined : BigInt(cursor) + (backwards ? -1n : 1n),
          maxCount: limit,
        })
      : await store.readAll({ direction, from: cursor === undefined ? undefined : readPosition(cursor), maxCount: limit, filter });
    let consumed = 0;
    for (const event of page) {
      last = event;
      consumed++;
      if (!stream || matchesAllFilter(event, filter)) found.push(event);
      if (found.length === limit) break;
    }
    scanned += consumed;
    if (page.length < limit && consumed === page.length) {
      exhausted = true;
      break;
    }
    cursor = stream ? String(last!.revision) : last!.position;
  }
  const nextCursor = exhausted || !last ? null : stream ? String(last.revision) : last.position;
  return { events: found, nextCursor };
};

/** A tenant's view of a filter: its own project only; asking for another project finds nothing. */
export const withinProject = (filter: AllFilter, project: string | undefined): AllFilter | null => {
  if (project === undefined) return filter;
  if (filter.project !== undefined && filter.project !== project) return null;
  return { ...filter, project };
};

export const AuditInputSchema = z
  .object({
    category: z
      .enum(STREAM_CATEGORIES)
      .optional()
      .describe('A stream category: the stream id before its first `-`, e.g. `job`, `annotation`, `doc`'),
    types: EventTypesSchema.optional().describe('Only these event types'),
    actor: z.string().min(1).optional().describe('Only events written for this actor subject'),
    project: z.string().min(1).optional().describe('Only events of this project'),
    commandId: z.string().min(1).optional().describe('Only events written by this command'),
    correlationId: z.string().min(1).optional().describe('Only events of this correlation (one request and what it caused)'),
    since: Instant.optional().describe('Only events recorded at or after this time'),
    until: Instant.optional().describe('Only events recorded at or before this time'),
    order: z.enum(['newest', 'oldest']).default('newest'),
    cursor: z
      .string()
      .refine((v) => readPosition(v) !== undefined, 'not a cursor returned by this query')
      .optional()
      .describe('The nextCursor of a previous page'),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .strict();
export type AuditInput = z.input<typeof AuditInputSchema>;

export const AuditOutputSchema = z.object({
  events: z.array(AuditEventSchema),
  nextCursor: z.string().nullable(),
});

/**
 * The audit log: events across every stream, narrowed by category, type, actor, project, command,
 * correlation and time, newest or oldest first. `project` restricts it to a tenant's events.
 */
export const auditEvents = async (store: EventStore, rawInput: AuditInput, project?: string): Promise<EventPage> => {
  const input = parseInput(AuditInputSchema, rawInput);
  const filter = withinProject(
    {
      categories: input.category === undefined ? undefined : [input.category],
      eventTypes: input.types,
      actor: input.actor,
      project: input.project,
      commandId: input.commandId,
      correlationId: input.correlationId,
      since: input.since,
      until: input.until,
    },
    project,
  );
  if (!filter) return { events: [], nextCursor: null };
  return readEventPage(store, {
    filter,
    direction: input.order === 'oldest' ? 'forwards' : 'backwards',
    cursor: input.cursor,
    limit: input.limit,
  });
};

/** The stream, and the file or item it is about where the event names one (`doc-… (docs:README.md)`). */
const streamCell = ({ streamId, data }: { streamId: string; data: Record<string, unknown> }) =>
  typeof data.source === 'string' && typeof data.sourceId === 'string'
    ? `${streamId} (${data.source}:${data.sourceId})`
    : streamId;

/** Events at the terminal, a line each, with the cursor of the next page. */
export const eventTable: CliPrint = {
  table: {
    rows: 'events',
    columns: {
      position: ({ position }: { position: string }) => compactPosition(position),
      recorded: '{recordedAt}',
      stream: streamCell,
      rev: '#{revision}',
      type: '{type}',
      actor: '{actor.subject} ({actor.via})',
    },
    empty: 'No events.',
    cursor: 'nextCursor',
  },
};

export const auditEventsSurfaces = {
  name: 'ledger.audit',
  cli: {
    command: ['audit'],
    description: 'the audit log: events across all streams, newest first, filtered',
    options: [
      {
        flags: '--category <category>',
        field: 'category',
        description: 'stream category: the stream id before its first -, e.g. job, annotation, doc',
      },
      { flags: '--type <type...>', field: 'types', parse: 'list', description: 'only these event types (repeat, or separate with commas)' },
      { flags: '--actor <subject>', field: 'actor', description: 'only events written for this actor subject' },
      { flags: '--project <project>', field: 'project', description: 'only events of this project' },
      { flags: '--command-id <id>', field: 'commandId', description: 'only events written by this command' },
      { flags: '--correlation-id <id>', field: 'correlationId', description: 'only events of this correlation' },
      { flags: '--since <iso>', field: 'since', description: 'only events recorded at or after this time' },
      { flags: '--until <iso>', field: 'until', description: 'only events recorded at or before this time' },
      { flags: '--oldest-first', field: 'order', value: 'oldest', description: 'oldest first' },
      { flags: '--limit <n>', field: 'limit', parse: 'number', default: 50, description: 'events per page' },
      { flags: '--cursor <cursor>', field: 'cursor', description: 'continue from a previous page' },
    ],
    print: eventTable,
  },
} as const satisfies OperationSurfaces;

export const auditEventsOperation = (store: EventStore) =>
  defineOperation({
    ...auditEventsSurfaces,
    title: 'Audit log',
    description:
      'Lists events across all streams, newest first (or oldest first), filtered by stream category, event type, ' +
      'actor, project, command id, correlation id and time, a page at a time.',
    toolset: 'ledger',
    writes: false,
    input: AuditInputSchema,
    output: AuditOutputSchema,
    // A tenant sees its own project's events; a caller without a tenant administers them all.
    run: async (input, context) => {
      const page = await auditEvents(store, input, context.actor.tenant ? context.project : undefined);
      return { events: page.events.map(toAuditEvent), nextCursor: page.nextCursor };
    },
  });

/** One event as `/api/v1` answers it: snake_case, as the REST API speaks. */
export const ApiAuditEventSchema = z.object({
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

export const apiAuditEvent = (e: StoredEvent): z.infer<typeof ApiAuditEventSchema> => ({
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

const timestamp = Instant;

/** The audit log's query string: an unknown parameter is refused. */
export const AuditEventsQuerySchema = z
  .object({
    category: z.enum(STREAM_CATEGORIES).optional().describe('Stream category: the stream id before its first `-`'),
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
    cursor: z.string().refine((v) => readPosition(v) !== undefined, 'not a cursor returned by this endpoint').optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();

export const AuditEventsResponseSchema = z.object({
  events: z.array(ApiAuditEventSchema),
  next_cursor: z.string().nullable(),
});

/** The audit log under `/api/v1`, in its own casing; MCP and the CLI have `ledger.audit`. */
export const auditRouteSurfaces = {
  name: 'ledger.audit_events',
  tool: false,
  toolset: 'ledger',
  scope: 'admin',
  writes: false,
  input: AuditEventsQuerySchema,
  output: AuditEventsResponseSchema,
  rest: {
    method: 'GET',
    path: '/audit/events',
    summary: 'Audit log: events across all streams, filtered, a page at a time',
    query: Object.keys(AuditEventsQuerySchema.shape),
  },
} as const satisfies RouteSurfaces;

export const auditRouteOperation = (store: EventStore) =>
  defineOperation({
    ...auditRouteSurfaces,
    title: 'Audit log',
    description: 'Events across all streams, filtered, a page at a time.',
    // A caller with a tenant sees only its project; an open deployment's caller sees everything.
    run: async (query, context) => {
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
        context.actor.tenant ? context.project : undefined,
      );
      return { events: page.events.map(apiAuditEvent), next_cursor: page.nextCursor };
    },
  });

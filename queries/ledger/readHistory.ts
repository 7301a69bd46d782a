import { z } from 'zod';
import { streamId } from '../../src/domain/events.js';
import { Instant } from '../../src/domain/instant.js';
import { readPosition } from '../../src/domain/position.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { NotFoundError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { parseInput } from '../../src/validation.js';
import { AuditOutputSchema, EventTypesSchema, eventTable, readEventPage, toAuditEvent } from './auditEvents.js';

export const ReadHistoryInputSchema = z
  .object({
    stream: z.string().min(1).optional().describe('A stream id such as `job-<uuid>`; omit to read all streams'),
    types: EventTypesSchema.optional().describe('Only these event types'),
    since: Instant.optional().describe('Only events recorded at or after this time'),
    until: Instant.optional().describe('Only events recorded at or before this time'),
    direction: z.enum(['forwards', 'backwards']).default('forwards'),
    cursor: z.string().optional().describe('The nextCursor of a previous page'),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .strict()
  .refine((input) => input.cursor === undefined || (input.stream ? /^\d+$/.test(input.cursor) : readPosition(input.cursor) !== undefined), {
    message: 'not a cursor returned by this query',
    path: ['cursor'],
  });
export type ReadHistoryInput = z.input<typeof ReadHistoryInputSchema>;

/** One event shape for the history and the audit log. */
export const ReadHistoryOutputSchema = AuditOutputSchema;
export type ReadHistoryOutput = z.infer<typeof ReadHistoryOutputSchema>;

/** The events of one stream, or of `$all`, oldest or newest first, a page at a time. */
/** `project` limits the history to one project's events (a tenant's view); omitted, every project's. */
export const readHistory = async (
  store: EventStore,
  rawInput: ReadHistoryInput,
  project?: string,
): Promise<ReadHistoryOutput> => {
  const input = parseInput(ReadHistoryInputSchema, rawInput);
  const page = await readEventPage(store, {
    stream: input.stream,
    filter: { eventTypes: input.types, since: input.since, until: input.until, project },
    direction: input.direction,
    cursor: input.cursor,
    limit: input.limit,
  });
  return { events: page.events.map(toAuditEvent), nextCursor: page.nextCursor };
};

type HistoryEvent = ReadHistoryOutput['events'][number];

const JOB_STREAM_PREFIX = streamId('job', '');

/** A job's events, without the job id each repeats. */
const jobEvents = ({ events }: { events: HistoryEvent[] }, input: { stream?: string }) => {
  if (events.length === 0) throw new NotFoundError(`Job not found: ${input.stream?.slice(JOB_STREAM_PREFIX.length) ?? ''}`);
  return {
    events: events.map(({ revision, type, occurredAt, data: { jobId: _id, ...data } }) => ({
      revision: Number(revision),
      type,
      occurredAt,
      data,
    })),
  };
};

export const readHistorySurfaces = {
  name: 'ledger.history',
  cli: [
    {
      command: ['history'],
      description: 'list the events of a stream, or of all streams',
      arguments: [
        { name: 'stream', field: 'stream', optional: true, description: 'a stream id such as job-<uuid>; all streams when omitted' },
      ],
      options: [
        { flags: '--type <type...>', field: 'types', description: 'only these event types' },
        { flags: '--since <iso>', field: 'since', description: 'only events recorded at or after this time' },
        { flags: '--until <iso>', field: 'until', description: 'only events recorded at or before this time' },
        { flags: '--limit <n>', field: 'limit', parse: 'number', default: 50, description: 'events per page' },
        { flags: '--cursor <cursor>', field: 'cursor', description: 'continue from a previous page' },
        { flags: '--backwards', field: 'direction', value: 'backwards', description: 'newest first' },
      ],
      print: eventTable,
    },
    {
      command: ['jobs', 'history'],
      description: 'every event of a job, with its time',
      arguments: [{ name: 'jobId', field: 'jobId' }],
      prepare: ({ jobId }) => ({ stream: streamId('job', jobId as string), limit: 500 }),
      allPages: { items: 'events', cursor: 'nextCursor', input: 'cursor' },
      shown: jobEvents,
      print: {
        table: {
          rows: 'events',
          columns: {
            occurred: '{occurredAt}',
            rev: '#{revision}',
            type: '{type}',
            details: (e: { data: object }) => (Object.keys(e.data).length ? JSON.stringify(e.data) : ''),
          },
          empty: 'Nothing to show.',
        },
      },
    },
  ],
} as const satisfies OperationSurfaces;

export const readHistoryOperation = (store: EventStore) =>
  defineOperation({
    ...readHistorySurfaces,
    title: 'Event history',
    description:
      'Lists the events of one stream (e.g. `job-<uuid>`, `annotation-<uuid>`, `doc-<uuid>`) or of all streams, ' +
      'filtered by event type and time, a page at a time, with positions, times and actors.',
    toolset: 'ledger',
    writes: false,
    input: ReadHistoryInputSchema,
    output: ReadHistoryOutputSchema,
    // A tenant sees its own project's events; a caller without a tenant administers them all.
    run: (input, context) => readHistory(store, input, context.actor.tenant ? context.project : undefined),
  });

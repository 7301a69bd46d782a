import { z } from 'zod';
import { EVENT_TYPES, type EventType, type StoredEvent } from '../src/domain/events.js';
import { isPosition, type Position } from '../src/domain/position.js';
import type { EventStore } from '../src/ports/eventStore.js';
import { defineOperation } from '../src/operations.js';
import { parseInput } from '../src/validation.js';

export const ReadHistoryInputSchema = z
  .object({
    stream: z.string().min(1).optional().describe('A stream id such as `job-<uuid>`; omit to read all streams'),
    types: z
      .array(z.enum(EVENT_TYPES as [EventType, ...EventType[]]))
      .optional()
      .describe('Only these event types'),
    since: z.iso.datetime({ offset: true }).optional().describe('Only events recorded at or after this time'),
    until: z.iso.datetime({ offset: true }).optional().describe('Only events recorded at or before this time'),
    direction: z.enum(['forwards', 'backwards']).default('forwards'),
    cursor: z.string().optional().describe('The nextCursor of a previous page'),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .strict()
  .refine((input) => input.cursor === undefined || (input.stream ? /^\d+$/.test(input.cursor) : isPosition(input.cursor)), {
    message: 'not a cursor returned by this query',
    path: ['cursor'],
  });
export type ReadHistoryInput = z.input<typeof ReadHistoryInputSchema>;

export const HistoryEventSchema = z.object({
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
  data: z.record(z.string(), z.unknown()),
});

export const ReadHistoryOutputSchema = z.object({
  events: z.array(HistoryEventSchema),
  nextCursor: z.string().nullable(),
});
export type ReadHistoryOutput = z.infer<typeof ReadHistoryOutputSchema>;

/** Work one call may do before it answers with what it has and a cursor to go on from. */
const SCAN_LIMIT = 10_000;

const toHistoryEvent = (e: StoredEvent): ReadHistoryOutput['events'][number] => ({
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
  data: e.data,
});

/** The events of one stream, or of `$all`, oldest or newest first, a page at a time. */
/** `project` limits the history to one project's events (a tenant's view); omitted, every project's. */
export const readHistory = async (
  store: EventStore,
  rawInput: ReadHistoryInput,
  project?: string,
): Promise<ReadHistoryOutput> => {
  const input = parseInput(ReadHistoryInputSchema, rawInput);
  const backwards = input.direction === 'backwards';
  const matches = (e: StoredEvent) =>
    (!project || e.metadata.project === project) &&
    (!input.types || input.types.includes(e.type)) &&
    (!input.since || Date.parse(e.recordedAt) >= Date.parse(input.since)) &&
    (!input.until || Date.parse(e.recordedAt) <= Date.parse(input.until));

  const found: StoredEvent[] = [];
  let scanned = 0;
  let last: StoredEvent | undefined;
  let exhausted = false;
  let cursor = input.cursor;
  while (found.length < input.limit && scanned < SCAN_LIMIT) {
    const page = input.stream
      ? await store.readStream(input.stream, {
          direction: input.direction,
          fromRevision: cursor === undefined ? undefined : BigInt(cursor) + (backwards ? -1n : 1n),
          maxCount: input.limit,
        })
      : await store.readAll({
          direction: input.direction,
          from: cursor as Position | undefined,
          maxCount: input.limit,
          filter: { eventTypes: input.types, project },
        });
    let consumed = 0;
    for (const event of page) {
      last = event;
      consumed++;
      if (matches(event)) found.push(event);
      if (found.length === input.limit) break;
    }
    scanned += consumed;
    if (page.length < input.limit && consumed === page.length) {
      exhausted = true;
      break;
    }
    cursor = input.stream ? String(last!.revision) : last!.position;
  }
  const nextCursor = exhausted || !last ? null : input.stream ? String(last.revision) : last.position;
  return { events: found.map(toHistoryEvent), nextCursor };
};

export const readHistoryOperation = (store: EventStore) =>
  defineOperation({
    name: 'ledger.history',
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

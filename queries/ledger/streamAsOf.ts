import { z } from 'zod';
import type { StoredEvent } from '../../src/domain/events.js';
import { AGGREGATE_NAMES, aggregateOf, type AggregateName } from './aggregates.js';
import { AsOfSchema, foldUntil, parseAsOf, type Fold } from '../../src/domain/asOf.js';
import { NotFoundError } from '../../src/errors.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { apiAuditEvent, ApiAuditEventSchema } from './auditEvents.js';

export interface StreamAsOf {
  streamId: string;
  aggregate: AggregateName | null;
  /** Revision of the last event by `asOf`, or null when the stream had none yet. */
  revision: bigint | null;
  /** The aggregate's state by `asOf`, as JSON; null for a stream of no known aggregate, or before it existed. */
  state: Record<string, unknown> | null;
  /** Every event of the stream, oldest first, including those after `asOf`. */
  events: StoredEvent[];
}

/** For streams of no known aggregate: folds nothing, so only the revision is found. */
const noState: Fold<null> = { initialState: () => null, evolve: () => null };

/**
 * One stream with its aggregate folded up to a past moment (a position or an ISO timestamp; now
 * when omitted). A stream with no events, or of another project than `project`, is not found.
 */
export const streamAsOf = async (
  store: EventStore,
  streamId: string,
  asOf: string | undefined,
  project?: string,
): Promise<StreamAsOf> => {
  const events = await store.readStream(streamId);
  if (!events[0] || (project !== undefined && events[0].metadata.project !== project)) {
    throw new NotFoundError(`No stream ${streamId}`);
  }
  const moment = asOf === undefined ? undefined : parseAsOf(asOf);
  const aggregate = aggregateOf(streamId);
  if (!aggregate) {
    const { revision } = foldUntil(events, noState, moment);
    return { streamId, aggregate: null, revision, state: null, events };
  }
  const folded = foldUntil(events, aggregate.fold, moment);
  return {
    streamId,
    aggregate: aggregate.name,
    revision: folded.revision,
    state: aggregate.present(folded, streamId.slice(aggregate.category.length + 1)),
    events,
  };
};

export const StreamAsOfInputSchema = z
  .object({
    stream_id: z.string().min(1).max(300),
    as_of: AsOfSchema.optional().describe('A position or an ISO 8601 timestamp; now when omitted'),
  })
  .strict();

export const StreamResponseSchema = z.object({
  stream_id: z.string(),
  aggregate: z.enum(AGGREGATE_NAMES).nullable(),
  as_of: z.string().nullable(),
  revision: z.number().int().nullable().describe('Revision of the last event by as_of'),
  state: z.record(z.string(), z.unknown()).nullable().describe('The aggregate as it was at as_of'),
  events: z.array(ApiAuditEventSchema).describe('Every event of the stream, oldest first'),
});

export const streamAsOfSurfaces = {
  name: 'ledger.stream_as_of',
  tool: false,
  toolset: 'ledger',
  scope: 'admin',
  writes: false,
  input: StreamAsOfInputSchema,
  output: StreamResponseSchema,
  rest: {
    method: 'GET',
    path: '/streams/{stream_id}',
    summary: "One stream's events and its aggregate as of a moment",
    query: ['as_of'],
  },
} as const satisfies RouteSurfaces;

export const streamAsOfOperation = (store: EventStore) =>
  defineOperation({
    ...streamAsOfSurfaces,
    title: 'A stream as of a moment',
    description: "One stream's events, and its aggregate as it was at a past moment.",
    // A caller with a tenant sees only its project; an open deployment's caller sees everything.
    run: async ({ stream_id, as_of }, context) => {
      const view = await streamAsOf(store, stream_id, as_of, context.actor.tenant ? context.project : undefined);
      return {
        stream_id: view.streamId,
        aggregate: view.aggregate,
        as_of: as_of ?? null,
        revision: view.revision === null ? null : Number(view.revision),
        state: view.state,
        events: view.events.map(apiAuditEvent),
      };
    },
  });

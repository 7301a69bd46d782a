import type { StoredEvent } from '../src/domain/events.js';
import { aggregateOf, type AggregateName } from '../src/engine/aggregates.js';
import { foldUntil, parseAsOf, type Fold } from '../src/engine/asOf.js';
import { NotFoundError } from '../src/errors.js';
import type { EventStore } from '../src/ports/eventStore.js';

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

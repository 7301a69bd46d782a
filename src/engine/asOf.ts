import type { DomainEvent } from '../domain/events.js';
import { foldUntil, type AsOf, type Fold, type Folded } from '../domain/asOf.js';
import type { EventStore } from '../ports/eventStore.js';

/**
 * Any aggregate as it was at a past moment (or now): its stream folded up to that point. One
 * mechanism for every aggregate, so jobs, sessions and documents all answer "as of" the same way.
 */
export const loadAggregateAsOf = async <State, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  fold: Fold<State, Event>,
  asOf?: AsOf,
): Promise<Folded<State>> => foldUntil(await store.readStream(streamId), fold, asOf);

/** Aggregates of several streams as they are now, in the order given: in one read where the store can. */
export const loadAggregates = async <State, Event extends DomainEvent>(
  store: EventStore,
  streamIds: readonly string[],
  fold: Fold<State, Event>,
): Promise<Folded<State>[]> => {
  const unique = [...new Set(streamIds)];
  const read = store.readStreams
    ? await store.readStreams(unique)
    : new Map(await Promise.all(unique.map(async (id) => [id, await store.readStream(id)] as const)));
  return streamIds.map((id) => foldUntil(read.get(id) ?? [], fold));
};

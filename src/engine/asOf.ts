import { z } from 'zod';
import type { DomainEvent, StoredEvent } from '../domain/events.js';
import { isPosition, type Position } from '../domain/position.js';
import type { EventStore } from '../ports/eventStore.js';
import type { Decider } from './commands.js';

/** A past moment: a position in `$all` (as returned by history) or an ISO timestamp. */
export type AsOf = { position: Position } | { timestamp: string };

export const AsOfSchema = z
  .string()
  .refine((v) => isPosition(v) || !Number.isNaN(Date.parse(v)), 'expected a position or an ISO timestamp')
  .describe('A past moment: a position from the event history, or an ISO 8601 timestamp');

export const parseAsOf = (value: string): AsOf =>
  isPosition(value) ? { position: value } : { timestamp: new Date(value).toISOString() };

export const happenedBy = (event: StoredEvent, asOf: AsOf): boolean =>
  'position' in asOf ? event.position <= asOf.position : Date.parse(event.recordedAt) <= Date.parse(asOf.timestamp);

/**
 * Any aggregate as it was at a past moment: its stream folded up to that point. One mechanism
 * for every aggregate, so jobs, sessions and documents all answer "as of" the same way.
 */
export const loadAggregateAsOf = async <State, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  asOf?: AsOf,
): Promise<{ state: State; revision: bigint | null; events: StoredEvent[] }> => {
  const all = await store.readStream(streamId);
  const events = asOf ? all.filter((e) => happenedBy(e, asOf)) : all;
  const state = events.reduce((s, e) => decider.evolve(s, e as StoredEvent<Event>), decider.initialState());
  return { state, revision: events.length ? events[events.length - 1]!.revision : null, events };
};

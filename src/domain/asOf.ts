import { z } from 'zod';
import type { DomainEvent, StoredEvent } from './events.js';
import { Instant } from './instant.js';
import { readPosition, START, type Position } from './position.js';

/** A past moment: a position in `$all` (as returned by history) or an ISO timestamp. */
export type AsOf = { position: Position } | { timestamp: string };

/** A position as given, or `0`: before the first event (`--from 0`). */
const givenPosition = (value: string): Position | undefined => (value === '0' ? START : readPosition(value));

/**
 * Only ISO 8601 with its offset: JavaScript's own date parsing takes `3` for 2001 and a time
 * without an offset for the reader's local time, and would answer as of a moment nobody meant.
 */
export const AsOfSchema = z
  .string()
  .refine(
    (v) => givenPosition(v) !== undefined || Instant.safeParse(v).success,
    'expected a position from the event history (e.g. 779-1, or 0 for before the first event) or an ISO 8601 time with Z or its UTC offset (e.g. 2026-11-29T14:00:00Z)',
  )
  .describe('A past moment: a position from the event history (0: before the first event), or an ISO 8601 time with Z or its UTC offset');

export const parseAsOf = (value: string): AsOf => {
  const position = givenPosition(value);
  return position ? { position } : { timestamp: new Date(value).toISOString() };
};

export const happenedBy = (event: StoredEvent, asOf: AsOf): boolean =>
  'position' in asOf ? event.position <= asOf.position : Date.parse(event.recordedAt) <= Date.parse(asOf.timestamp);

/** How an aggregate's state is built from its stream: a decider's fold, or a read model's. */
export interface Fold<State, Event extends DomainEvent = DomainEvent> {
  initialState(): State;
  evolve(state: State, event: StoredEvent<Event>): State;
}

export interface Folded<State> {
  state: State;
  /** Revision of the last event folded, or null when none was. */
  revision: bigint | null;
  /** Index of the first event not folded: where a later fold of the same events goes on from. */
  next: number;
}

/**
 * Folds a stream's events up to the last one that happened by `asOf` (all of them without it),
 * starting afresh or from an earlier fold of the same events. It stops at the first later event:
 * stream order is commit order, so the state is always one the stream really passed through.
 */
export const foldUntil = <State, Event extends DomainEvent>(
  events: readonly StoredEvent[],
  fold: Fold<State, Event>,
  asOf?: AsOf,
  from: Pick<Folded<State>, 'state' | 'next'> = { state: fold.initialState(), next: 0 },
): Folded<State> => {
  let { state, next } = from;
  for (; next < events.length; next++) {
    const event = events[next]!;
    if (asOf && !happenedBy(event, asOf)) break;
    state = fold.evolve(state, event as StoredEvent<Event>);
  }
  return { state, revision: next > 0 ? events[next - 1]!.revision : null, next };
};


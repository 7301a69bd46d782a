import {
  annotationStream,
  evolveSession,
  initialSessionState,
  SessionNotFoundError,
  type AnnotationEvent,
  type SessionState,
} from './annotations.js';
import type { StoredEvent } from './events.js';
import type { Position } from './position.js';
import { foldUntil, loadAggregateAsOf, type AsOf, type Fold } from '../engine/asOf.js';
import type { EventStore } from '../ports/eventStore.js';

/** A session's state, built from its stream. */
export const sessionFold: Fold<SessionState, AnnotationEvent> = {
  initialState: initialSessionState,
  evolve: evolveSession,
};

export const readSessionEvents = async (store: EventStore, sessionId: string) =>
  (await store.readStream(annotationStream(sessionId))) as StoredEvent<AnnotationEvent>[];

/** The session folded up to `asOf`, afresh or on from an earlier fold of the same events. */
export const foldSessionUntil = (
  events: readonly StoredEvent<AnnotationEvent>[],
  asOf: AsOf | undefined,
  state: SessionState = initialSessionState(),
  from = 0,
): { state: SessionState; next: number } => foldUntil(events, sessionFold, asOf, { state, next: from });

/** The session as it was at `asOf` (or now); SessionNotFound when it did not exist then. */
export const sessionAsOf = async (
  store: EventStore,
  sessionId: string,
  asOf?: AsOf,
): Promise<SessionState> => {
  const { state } = await loadAggregateAsOf(store, annotationStream(sessionId), sessionFold, asOf);
  if (state.sessionId === null) throw new SessionNotFoundError(sessionId);
  return state;
};

/**
 * Read-your-writes for the session's read models: waits until projections have applied the last
 * event of the session's stream. Throws SessionNotFound for a stream that does not exist.
 */
export const awaitSessionReadModels = async (
  store: EventStore,
  waitForProjections: (position: Position) => Promise<void>,
  sessionId: string,
): Promise<void> => {
  const [last] = await store.readStream(annotationStream(sessionId), { direction: 'backwards', maxCount: 1 });
  if (!last) throw new SessionNotFoundError(sessionId);
  await waitForProjections(last.position);
};

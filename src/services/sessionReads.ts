import { annotationStream, SessionNotFoundError, type AnnotationEvent, type SessionState } from '../domain/annotations.js';
import { sessionFold } from '../domain/annotationSessionFold.js';
import type { AsOf } from '../domain/asOf.js';
import type { StoredEvent } from '../domain/events.js';
import type { Position } from '../domain/position.js';
import { loadAggregateAsOf } from '../engine/asOf.js';
import type { EventStore } from '../ports/eventStore.js';

export const readSessionEvents = async (store: EventStore, sessionId: string) =>
  (await store.readStream(annotationStream(sessionId))) as StoredEvent<AnnotationEvent>[];

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

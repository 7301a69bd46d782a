import {
  annotationStream,
  evolveSession,
  initialSessionState,
  SessionNotFoundError,
  type AnnotationEvent,
  type SessionState,
} from '../src/domain/annotations.js';
import type { StoredEvent } from '../src/domain/events.js';
import type { Position } from '../src/domain/position.js';
import { happenedBy, type AsOf } from '../src/engine/asOf.js';
import type { EventStore } from '../src/ports/eventStore.js';

export const readSessionEvents = async (store: EventStore, sessionId: string) =>
  (await store.readStream(annotationStream(sessionId))) as StoredEvent<AnnotationEvent>[];

/**
 * Folds events into a fresh state, stopping at the first one after `asOf`. Stream order is commit
 * order, so everything after that event happened later too.
 */
export const foldSessionUntil = (
  events: readonly StoredEvent<AnnotationEvent>[],
  asOf: AsOf | undefined,
  state: SessionState = initialSessionState(),
  from = 0,
): { state: SessionState; next: number } => {
  let index = from;
  for (; index < events.length; index++) {
    const event = events[index]!;
    if (asOf && !happenedBy(event, asOf)) break;
    evolveSession(state, event);
  }
  return { state, next: index };
};

/** The session as it was at `asOf` (or now); SessionNotFound when it did not exist then. */
export const sessionAsOf = async (
  store: EventStore,
  sessionId: string,
  asOf?: AsOf,
): Promise<SessionState> => {
  const { state } = foldSessionUntil(await readSessionEvents(store, sessionId), asOf);
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

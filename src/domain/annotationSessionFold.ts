import {
  evolveSession,
  initialSessionState,
  type AnnotationEvent,
  type SessionState,
} from './annotations.js';
import type { StoredEvent } from './events.js';
import { foldUntil, type AsOf, type Fold } from './asOf.js';

/** A session's state, built from its stream. */
export const sessionFold: Fold<SessionState, AnnotationEvent> = {
  initialState: initialSessionState,
  evolve: evolveSession,
};

/** The session folded up to `asOf`, afresh or on from an earlier fold of the same events. */
export const foldSessionUntil = (
  events: readonly StoredEvent<AnnotationEvent>[],
  asOf: AsOf | undefined,
  state: SessionState = initialSessionState(),
  from = 0,
): { state: SessionState; next: number } => foldUntil(events, sessionFold, asOf, { state, next: from });

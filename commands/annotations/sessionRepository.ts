import {
  annotationStream,
  evolveSession,
  initialSessionState,
  type AnnotationEvent,
  type SessionState,
} from '../../src/domain/annotations.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import { runCommand, type CommandContext, type Decision } from '../../src/engine/commands.js';
import { ConcurrencyError } from '../../src/errors.js';
import type { EventStore } from '../../src/ports/eventStore.js';

/** What a session command decides: the events to append and the answer to give. */
export type SessionDecision<R> = Decision<AnnotationEvent, R>;

export interface SessionRepository {
  /**
   * Decides on the session's current state and appends the events, checking the stream revision.
   * `decide` must only read (it may load keys first): on a conflict it runs again on the fresher state.
   */
  execute: <R>(
    sessionId: string,
    decide: (state: SessionState) => SessionDecision<R> | Promise<SessionDecision<R>>,
    context: CommandContext,
  ) => Promise<{ result: R; position: Position | null }>;
  /** Reads the current state of a session, caught up from the stream (and kept); null if it does not exist. */
  read: <R>(sessionId: string, read: (state: SessionState) => R) => Promise<R | null>;
}

interface Cached {
  state: SessionState;
  revision: bigint | null;
}

const CACHED_SESSIONS = 32;
const CONFLICT_RETRIES = 5;

/**
 * Session state for commands, kept in memory and caught up from the stream before each decision.
 *
 * A session of 10,000 chunks has 10,000+ events; folding them for every annotation would make each
 * call slower than the last. Instead each cached session remembers the revision it has folded up to
 * and reads only the events after it. Honesty about concurrency comes from the store, not the
 * cache: every append expects the revision the decision was made on, so a write by another process
 * (or a stale cache) is a ConcurrencyError, after which the state is caught up and the command
 * decided again. Commands on one session in this process run one at a time, so they never conflict
 * with each other. Nothing is lost: each change either lands on the state it was decided on, or is
 * decided again.
 */
export const createSessionRepository = (store: EventStore): SessionRepository => {
  const cache = new Map<string, Cached>();
  const queues = new Map<string, Promise<unknown>>();

  const remember = (sessionId: string, entry: Cached) => {
    cache.delete(sessionId);
    cache.set(sessionId, entry);
    if (cache.size > CACHED_SESSIONS) cache.delete(cache.keys().next().value!);
  };

  const catchUp = async (sessionId: string): Promise<Cached> => {
    const entry = cache.get(sessionId) ?? { state: initialSessionState(), revision: null };
    const stream = annotationStream(sessionId);
    // A stream the store knows this process wrote last is current without a read.
    if (entry.revision !== null && store.knownRevision?.(stream) === entry.revision) return entry;
    const fromRevision = entry.revision === null ? 0n : entry.revision + 1n;
    const events = await store.readStream(stream, { fromRevision });
    try {
      for (const event of events) {
        evolveSession(entry.state, event as StoredEvent<AnnotationEvent>);
        entry.revision = event.revision;
      }
    } catch (error) {
      cache.delete(sessionId);
      throw error;
    }
    // A session that does not exist is not cached: it may be created by the next call.
    if (entry.revision !== null) remember(sessionId, entry);
    return entry;
  };

  const run = async <R>(
    sessionId: string,
    decide: (state: SessionState) => SessionDecision<R> | Promise<SessionDecision<R>>,
    context: CommandContext,
  ): Promise<{ result: R; position: Position | null }> => {
    let appending = false;
    try {
      const { loaded, events, result, appended } = await runCommand(
        store,
        annotationStream(sessionId),
        () => catchUp(sessionId),
        async (state: SessionState) => {
          appending = false;
          const decision = await decide(state);
          appending = true;
          return decision;
        },
        context,
        { retries: CONFLICT_RETRIES },
      );
      if (!appended) return { result, position: null };
      const entry = loaded as Cached;
      for (const event of events) evolveSession(entry.state, event);
      entry.revision = appended.nextExpectedRevision;
      return { result, position: appended.position };
    } catch (error) {
      // A failed append leaves the cached state in doubt; a refused decision or a conflict does not.
      if (appending && !(error instanceof ConcurrencyError)) cache.delete(sessionId);
      throw error;
    }
  };

  /** Work on one session runs one call at a time, in order. */
  const enqueue = <T>(sessionId: string, work: () => Promise<T>): Promise<T> => {
    const previous = queues.get(sessionId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    const settled = next.catch(() => undefined);
    queues.set(sessionId, settled);
    void settled.then(() => {
      if (queues.get(sessionId) === settled) queues.delete(sessionId);
    });
    return next;
  };

  return {
    execute: (sessionId, decide, context) => enqueue(sessionId, () => run(sessionId, decide, context)),
    read: (sessionId, read) =>
      enqueue(sessionId, async () => {
        const entry = await catchUp(sessionId);
        return entry.revision === null ? null : read(entry.state);
      }),
  };
};

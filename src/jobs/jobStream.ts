import { jobDecider, type JobTransition } from '../services/jobDecider.js';
import { streamId, validateEvent, type StoredEvent } from '../domain/events.js';
import type { JobState } from '../domain/jobs.js';
import type { Position } from '../domain/position.js';
import { loadAggregateAsOf } from '../engine/asOf.js';
import { metadataFor, type CommandContext } from '../engine/commands.js';
import type { EventStore } from '../ports/eventStore.js';

/**
 * One job's stream as its runner holds it: state and revision kept in memory, every append made
 * with the expected revision, so a concurrent writer (a cancel, another runner) is noticed as a
 * ConcurrencyError and the runner reloads instead of overwriting.
 */
export interface JobStream {
  readonly jobId: string;
  readonly state: JobState;
  apply(transition: JobTransition, context: CommandContext): Promise<Position>;
  reload(): Promise<void>;
}

export const openJobStream = async (store: EventStore, jobId: string): Promise<JobStream> => {
  const stream = streamId('job', jobId);
  let { state, revision } = await loadAggregateAsOf(store, stream, jobDecider);
  return {
    jobId,
    get state() {
      return state;
    },
    async apply(transition, context) {
      const decided = jobDecider.decide({ ...transition, jobId }, state, context);
      const expected = revision ?? 'no_stream';
      const events = decided.map((event, index) => ({
        ...validateEvent(event),
        metadata: metadataFor(context, { streamId: stream, expected, index }),
      }));
      const result = await store.append(stream, events, expected);
      revision = result.nextExpectedRevision;
      state = events.reduce(
        (s, e) => jobDecider.evolve(s, { ...e, streamId: stream, revision: result.nextExpectedRevision, position: result.position, recordedAt: context.now } as StoredEvent<never>),
        state,
      );
      return result.position;
    },
    async reload() {
      ({ state, revision } = await loadAggregateAsOf(store, stream, jobDecider));
    },
  };
};

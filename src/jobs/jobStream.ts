import { jobDecider, type JobTransition } from '../services/jobDecider.js';
import { streamId, type StoredEvent } from '../domain/events.js';
import type { JobState } from '../domain/jobs.js';
import type { Position } from '../domain/position.js';
import { loadAggregateAsOf } from '../engine/asOf.js';
import { runCommand, type CommandContext } from '../engine/commands.js';
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
      const { events, appended } = await runCommand(
        store,
        stream,
        () => Promise.resolve({ state, revision }),
        (current) => ({ events: jobDecider.decide({ ...transition, jobId }, current, context), result: undefined }),
        context,
      );
      // A transition always decides one event.
      const { nextExpectedRevision, position } = appended!;
      revision = nextExpectedRevision;
      state = events.reduce(
        (s, e) => jobDecider.evolve(s, { ...e, streamId: stream, revision, position, recordedAt: context.now } as StoredEvent<never>),
        state,
      );
      return position;
    },
    async reload() {
      ({ state, revision } = await loadAggregateAsOf(store, stream, jobDecider));
    },
  };
};

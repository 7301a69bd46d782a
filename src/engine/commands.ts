import { validateEvent, type DomainEvent, type StoredEvent } from '../domain/events.js';
import { deterministicUuid, newId } from '../domain/ids.js';
import type { Actor, EventMetadata } from '../domain/metadata.js';
import type { Position } from '../domain/position.js';
import { ConcurrencyError } from '../errors.js';
import { loadAggregateAsOf } from './asOf.js';
import type { Fold } from '../domain/asOf.js';
import { MAX_APPEND_BYTES, type AppendResult, type EventStore, type ExpectedRevision, type NewEvent } from '../ports/eventStore.js';

/** Who issues a command and why; time and ids arrive here so that `decide` stays pure. */
export interface CommandContext {
  commandId: string;
  correlationId: string;
  causationId: string | null;
  actor: Actor;
  project: string;
  now: string;
}

export const commandContext = (
  actor: Actor,
  fields: Partial<Omit<CommandContext, 'actor'>> = {},
): CommandContext => {
  const commandId = fields.commandId ?? newId();
  return {
    commandId,
    correlationId: fields.correlationId ?? commandId,
    causationId: fields.causationId ?? null,
    actor,
    project: fields.project ?? 'default',
    now: fields.now ?? new Date().toISOString(),
  };
};

/** An aggregate's behaviour: fold its events into state, and decide what a command changes. */
export interface Decider<State, Command, Event extends DomainEvent> extends Fold<State, Event> {
  decide(command: Command, state: State, context: CommandContext): Event[];
}

export interface CommandResult<State> {
  events: StoredEvent[];
  state: State;
  /** Revision of the stream after the command, or null if the stream does not exist. */
  revision: bigint | null;
  position: Position | null;
}

export interface HandleOptions {
  /** Retries on a concurrency conflict, re-deciding on fresh state: only for commands that say it is safe. */
  retries?: number;
}

export type RunOptions = {
  /** `any`: append whatever the stream holds, for records no decision depends on (audit trails, sync cursors). */
  expected?: 'any';
} & (
  | (HandleOptions & { batched?: false })
  | {
      /**
       * Lets a decision too large for one append land in several, each within the store's size limit
       * and expecting the revision the previous one left: only for a command whose readers wait for its
       * last event. Without it, such a decision is refused whole. Never retried: after a conflict on a
       * later part, deciding again would append the parts already stored a second time.
       */
      batched: true;
      retries?: 0;
    }
);

/** Where an event goes: its stream, the revision the append expects, and its place in the append. */
interface EventSlot {
  streamId: string;
  expected: ExpectedRevision;
  index: number;
}

const metadataFor = (context: CommandContext, slot: EventSlot): EventMetadata => ({
  // Derived from the command and the slot: a retried append writes the same ids, and the store
  // answers with the original result instead of writing twice; distinct appends never collide.
  eventId: deterministicUuid(context.commandId, slot.streamId, String(slot.expected), String(slot.index)),
  commandId: context.commandId,
  correlationId: context.correlationId,
  causationId: context.causationId,
  actor: context.actor,
  project: context.project,
  occurredAt: context.now,
});

/** What a command decided: the events to append, and the answer to give its caller. */
export interface Decision<Event extends DomainEvent, Result> {
  events: Event[];
  result: Result;
  /** Per event, the command it comes from, when the events gather several commands' records; by default, this one. */
  contexts?: readonly CommandContext[];
}

export interface LoadedState<State> {
  state: State;
  /** Revision of the stream the state was folded to, or null if the stream does not exist. */
  revision: bigint | null;
}

/** The load of a command that starts its stream, or records whatever it holds: nothing to read. */
export const unread =
  <State>(state: State) =>
  (): Promise<LoadedState<State>> =>
    Promise.resolve({ state, revision: null });

/** An event as appended: checked against the catalog, with its metadata. */
export type Stamped<Event extends DomainEvent> = Event & { metadata: EventMetadata };

export interface Decided<State, Event extends DomainEvent, Result> {
  loaded: LoadedState<State>;
  events: Stamped<Event>[];
  result: Result;
  /** The (last) append's result; null when nothing was appended. */
  appended: AppendResult | null;
}

/** Room left in one append for framing, below the store's limit. */
const APPEND_BUDGET = MAX_APPEND_BYTES - 64 * 1024;

/** Consecutive runs of events, each within one append's budget. */
const appendBatches = (events: readonly NewEvent[]): NewEvent[][] => {
  const batches: NewEvent[][] = [];
  let bytes = 0;
  for (const event of events) {
    const size = Buffer.byteLength(JSON.stringify(event));
    const last = batches.at(-1);
    if (last && bytes + size <= APPEND_BUDGET) {
      last.push(event);
      bytes += size;
    } else {
      batches.push([event]);
      bytes = size;
    }
  }
  return batches;
};

/**
 * The one command loop, and the only way events are appended: load the state, decide, check each
 * event against the catalog, stamp it with its command's metadata, append expecting the loaded
 * revision (no revision: a stream that must not exist yet). On a concurrency conflict it loads again
 * and decides again, up to `retries` times; `decide` must only read, so deciding again is safe.
 */
export const runCommand = async <State, Event extends DomainEvent, Result>(
  store: EventStore,
  streamId: string,
  load: () => Promise<LoadedState<State>>,
  decide: (state: State) => Decision<Event, Result> | Promise<Decision<Event, Result>>,
  context: CommandContext,
  { retries = 0, expected: anyRevision, batched = false }: RunOptions = {},
): Promise<Decided<State, Event, Result>> => {
  for (let attempt = 0; ; attempt++) {
    const loaded = await load();
    const { events, result, contexts } = await decide(loaded.state);
    if (events.length === 0) return { loaded, events: [], result, appended: null };
    const expected: ExpectedRevision = anyRevision ?? loaded.revision ?? 'no_stream';
    const stamped: NewEvent[] = events.map((event, index) => ({
      ...validateEvent(event),
      metadata: metadataFor(contexts?.[index] ?? context, { streamId, expected, index }),
    }));
    try {
      let appended: AppendResult | null = null;
      for (const batch of batched ? appendBatches(stamped) : [stamped])
        appended = await store.append(streamId, batch, appended?.nextExpectedRevision ?? expected);
      return { loaded, events: stamped as Stamped<Event>[], result, appended };
    } catch (error) {
      if (error instanceof ConcurrencyError && attempt < retries) continue;
      throw error;
    }
  }
};

/** An event to record, and the command it comes from. */
export interface Recorded<Event extends DomainEvent> {
  event: Event;
  context: CommandContext;
}

/** Load the stream, fold, decide, append with the loaded revision. */
export const handleCommand = async <State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  context: CommandContext,
  options: HandleOptions = {},
): Promise<CommandResult<State>> => {
  const { loaded, appended, events } = await runCommand(
    store,
    streamId,
    () => loadAggregateAsOf(store, streamId, decider),
    (state) => ({ events: decider.decide(command, state, context), result: undefined }),
    context,
    options,
  );
  if (!appended) return { events: [], state: loaded.state, revision: loaded.revision, position: null };
  const written = await store.readStream(streamId, {
    fromRevision: appended.nextExpectedRevision - BigInt(events.length) + 1n,
    toRevision: appended.nextExpectedRevision,
  });
  const state = written.reduce((s, e) => decider.evolve(s, e as StoredEvent<Event>), loaded.state);
  return { events: written, state, revision: appended.nextExpectedRevision, position: appended.position };
};

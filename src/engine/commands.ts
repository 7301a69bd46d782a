import { validateEvent, type DomainEvent, type StoredEvent } from '../domain/events.js';
import { deterministicUuid, newId } from '../domain/ids.js';
import type { Actor, EventMetadata } from '../domain/metadata.js';
import type { Position } from '../domain/position.js';
import { ConcurrencyError } from '../errors.js';
import { loadAggregateAsOf } from './asOf.js';
import { type Fold } from '../domain/asOf.js';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent } from '../ports/eventStore.js';

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

/** Where an event goes: its stream, the revision the append expects, and its place in the append. */
export interface EventSlot {
  streamId: string;
  expected: ExpectedRevision;
  index: number;
}

export const metadataFor = (context: CommandContext, slot: EventSlot): EventMetadata => ({
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
}

export interface LoadedState<State> {
  state: State;
  /** Revision of the stream the state was folded to, or null if the stream does not exist. */
  revision: bigint | null;
}

export interface Decided<State, Event extends DomainEvent, Result> {
  loaded: LoadedState<State>;
  /** The events as appended (checked against the catalog). */
  events: Event[];
  result: Result;
  /** Null when nothing was appended. */
  appended: AppendResult | null;
}

/**
 * The one command loop: load the state, decide, append expecting the loaded revision. On a
 * concurrency conflict it loads again and decides again, up to `retries` times; `decide` must only
 * read, so deciding again is safe.
 */
export const runCommand = async <State, Event extends DomainEvent, Result>(
  store: EventStore,
  streamId: string,
  load: () => Promise<LoadedState<State>>,
  decide: (state: State) => Decision<Event, Result> | Promise<Decision<Event, Result>>,
  context: CommandContext,
  { retries = 0 }: HandleOptions = {},
): Promise<Decided<State, Event, Result>> => {
  for (let attempt = 0; ; attempt++) {
    const loaded = await load();
    const { events, result } = await decide(loaded.state);
    if (events.length === 0) return { loaded, events, result, appended: null };
    const expected: ExpectedRevision = loaded.revision ?? 'no_stream';
    const checked = events.map(validateEvent);
    const newEvents: NewEvent[] = checked.map((event, index) => ({
      ...event,
      metadata: metadataFor(context, { streamId, expected, index }),
    }));
    try {
      const appended = await store.append(streamId, newEvents, expected);
      return { loaded, events: checked as Event[], result, appended };
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

/**
 * Appends records that no decision depends on (audit trails, sync cursors) whatever the stream's
 * revision: each event is checked against the catalog and gets the metadata of its own command.
 */
export const appendRecords = async <Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  records: readonly Recorded<Event>[],
): Promise<AppendResult | null> => {
  if (records.length === 0) return null;
  const newEvents: NewEvent[] = records.map(({ event, context }, index) => ({
    ...validateEvent(event),
    metadata: metadataFor(context, { streamId, expected: 'any', index }),
  }));
  return store.append(streamId, newEvents, 'any');
};

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

import { expect } from 'vitest';
import type { DomainEvent, StoredEvent } from '../../src/domain/events.js';
import type { EventMetadata } from '../../src/domain/metadata.js';
import { position } from '../../src/domain/position.js';
import { commandContext, type CommandContext, type Decider } from '../../src/engine/commands.js';
import type { DocumentProjection } from '../../src/ports/projections.js';
import { testMetadata } from './events.js';

/** The context commands of the fast tier run with: a fixed actor, project and time. */
export const unitContext = (fields: Partial<Omit<CommandContext, 'actor'>> = {}): CommandContext =>
  commandContext(
    { subject: 'test', tenant: null, via: 'system' },
    { now: '2026-01-02T03:04:05.000Z', ...fields },
  );

/**
 * Events as a store would hand them back: in one stream (or each in the stream its `streamId` names),
 * numbered in order, recorded at `recordedAt` (the context's time when absent).
 */
export const asStored = <E extends DomainEvent>(
  events: readonly (E | StoredEvent<E>)[],
  { streamId = 'test-stream', metadata = {} }: { streamId?: string; metadata?: Partial<EventMetadata> } = {},
): StoredEvent<E>[] =>
  events.map((event, i) => {
    if ('position' in event) return event;
    const meta = testMetadata({ occurredAt: '2026-01-02T03:04:05.000Z', ...metadata });
    return {
      ...event,
      streamId,
      revision: BigInt(i),
      position: position(i + 1, i + 1),
      metadata: meta,
      recordedAt: meta.occurredAt,
    };
  });

/** A decider's state after `events`. */
export const stateAfter = <S, C, E extends DomainEvent>(decider: Decider<S, C, E>, events: readonly E[]): S =>
  asStored(events).reduce((state, event) => decider.evolve(state, event), decider.initialState());

/** One given/when/then case of a decider: the events so far, the command, and what it decides or the error it throws. */
export interface DeciderCase<C, E extends DomainEvent> {
  given?: readonly E[];
  when: C;
  /** The events decided, each matched as `toMatchObject` does (none: `[]`). */
  then?: readonly unknown[];
  /** The error thrown: its class, or its message (or a part of it). */
  throws?: (abstract new (...args: never[]) => Error) | string | RegExp;
  context?: CommandContext;
}

/** Checks a decider case: given its events, when its command, then its events or its error. */
export const checkDecider = <S, C, E extends DomainEvent>(
  decider: Decider<S, C, E>,
  c: DeciderCase<C, E>,
): void => {
  const state = stateAfter(decider, c.given ?? []);
  const decide = () => decider.decide(c.when, state, c.context ?? unitContext());
  if (c.throws !== undefined) {
    expect(decide).toThrow(c.throws);
    return;
  }
  expect(decide()).toMatchObject(c.then ?? []);
};

/**
 * A read model after `events`, as a projection sink would hold it: each event its projection handles
 * goes to the documents it names; a document `evolve` answers null for is gone.
 */
export const projectionAfter = <Doc>(
  projection: DocumentProjection<Doc>,
  events: readonly StoredEvent[],
): Map<string, Doc> => {
  const documents = new Map<string, Doc>();
  const handled = new Set<string>(projection.eventTypes);
  for (const event of events) {
    if (!handled.has(event.type)) continue;
    for (const id of projection.documentIds(event)) {
      const next = projection.evolve(documents.get(id) ?? null, event, id);
      if (next === null) documents.delete(id);
      else documents.set(id, next);
    }
  }
  return documents;
};

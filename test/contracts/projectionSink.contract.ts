import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { position, START, type Position } from '../../src/domain/position.js';
import {
  CheckpointMovedError,
  UnprojectableEventError,
  type DocumentProjection,
  type ReadModels,
  type RunnableProjection,
} from '../../src/ports/projections.js';
import { testMetadata } from '../support/events.js';

export interface ProjectionSinkFixture {
  /** Runs `projection` on the adapter, as the composition root does. */
  run<Doc>(projection: DocumentProjection<Doc>): Promise<RunnableProjection>;
  readModels: ReadModels;
  cleanup(): Promise<void>;
}

interface Tally {
  documentId: string;
  events: number;
}

/** Counts each document's ingestions and removals; a document named `poison` can never be applied. */
const tallies = (name: string): DocumentProjection<Tally> => ({
  name,
  version: 1,
  eventTypes: ['DocumentIngested', 'DocumentRemoved'],
  documentIds: (event) => [(event.data as { documentId: string }).documentId],
  evolve: (doc, event, id) => {
    if (id === 'poison') throw new Error('this event cannot be applied');
    return { documentId: id, events: (doc?.events ?? 0) + 1 };
  },
});

/** The projection sink contract (see src/ports/projections.ts): every sink adapter must pass it. */
export const describeProjectionSinkContract = (name: string, factory: () => Promise<ProjectionSinkFixture>): void => {
  describe(`ProjectionSink contract: ${name}`, () => {
    let fixture: ProjectionSinkFixture;
    let sequence = 0n;
    beforeAll(async () => {
      fixture = await factory();
    }, 120_000);
    afterAll(async () => {
      await fixture?.cleanup();
    });

    const at = (): Position => position(1, (sequence += 1n));
    const removal = (documentId: string): StoredEvent => ({
      type: 'DocumentRemoved',
      schemaVersion: 1,
      data: { documentId, reason: null },
      streamId: `doc-${documentId}`,
      revision: 0n,
      position: at(),
      metadata: testMetadata(),
      recordedAt: new Date().toISOString(),
    });
    const projection = () => fixture.run(tallies(`contract_${randomUUID().slice(0, 8)}`));
    const tallyOf = (runnable: RunnableProjection, id: string) => fixture.readModels.get<Tally>(runnable.name, id);

    it('applies a batch and moves the checkpoint to its end, as one unit', async () => {
      const runnable = await projection();
      expect(await runnable.live.checkpoint()).toBe(START);
      const events = [removal('a'), removal('a'), removal('b')];
      await runnable.live.apply(events, START, events.at(-1)!.position);
      expect(await runnable.live.checkpoint()).toBe(events.at(-1)!.position);
      expect(await tallyOf(runnable, 'a')).toEqual({ documentId: 'a', events: 2 });
      expect(await tallyOf(runnable, 'b')).toEqual({ documentId: 'b', events: 1 });
    });

    it('applies nothing and throws CheckpointMovedError when the stored checkpoint is not `from`', async () => {
      const runnable = await projection();
      const first = removal('a');
      await runnable.live.apply([first], START, first.position);
      const stale = removal('a');
      await expect(runnable.live.apply([stale], START, stale.position)).rejects.toBeInstanceOf(CheckpointMovedError);
      expect(await runnable.live.checkpoint()).toBe(first.position);
      expect(await tallyOf(runnable, 'a')).toEqual({ documentId: 'a', events: 1 });
    });

    it('applies nothing of a batch holding an event that can never be applied, and quarantines it on request', async () => {
      const runnable = await projection();
      const good = removal('a');
      const poison = removal('poison');
      await expect(runnable.live.apply([good, poison], START, poison.position)).rejects.toBeInstanceOf(UnprojectableEventError);
      expect(await runnable.live.checkpoint()).toBe(START);
      expect(await tallyOf(runnable, 'a')).toBeNull();

      await runnable.live.apply([good], START, good.position);
      await runnable.live.quarantine(poison, 'this event cannot be applied', good.position, poison.position);
      expect(await runnable.live.checkpoint()).toBe(poison.position);
      expect(await tallyOf(runnable, 'poison')).toBeNull();
      expect(await runnable.quarantined()).toEqual([
        expect.objectContaining({ position: poison.position, eventType: 'DocumentRemoved', streamId: poison.streamId }),
      ]);
    });

    it('reads several documents at once, with only the listed elements of an array field when asked', async () => {
      const name = `contract_${randomUUID().slice(0, 8)}`;
      const runnable = await fixture.run<{ documentId: string; parts: { id: string; n: number }[] }>({
        ...tallies(name),
        evolve: (_doc, _event, id) => ({ documentId: id, parts: ['p1', 'p2', 'p3'].map((part, n) => ({ id: `${id}-${part}`, n })) }),
      });
      const events = [removal('a'), removal('b')];
      await runnable.live.apply(events, START, events.at(-1)!.position);
      const whole = await fixture.readModels.getMany<{ parts: unknown[] }>(name, ['a', 'b', 'missing']);
      expect([...whole.keys()].sort()).toEqual(['a', 'b']);
      expect(whole.get('a')!.parts).toHaveLength(3);
      const picked = await fixture.readModels.getMany<{ documentId: string; parts: { id: string }[] }>(name, ['a', 'b'], {
        field: 'parts',
        ids: ['a-p3', 'a-p1', 'nowhere'],
      });
      expect(picked.get('a')).toEqual({ documentId: 'a', parts: [{ id: 'a-p1', n: 0 }, { id: 'a-p3', n: 2 }] });
      expect(picked.get('b')).toEqual({ documentId: 'b', parts: [] });
    });

    it('fills a shadow from the start beside the live model, and promoting swaps it in with its checkpoint', async () => {
      const runnable = await projection();
      const events = [removal('a'), removal('a')];
      await runnable.live.apply(events.slice(0, 1), START, events[0]!.position);
      const shadow = await runnable.openShadow();
      expect(await shadow.checkpoint()).toBe(START);
      await shadow.apply(events, START, events[1]!.position);
      expect(await tallyOf(runnable, 'a')).toEqual({ documentId: 'a', events: 1 });
      await shadow.promote();
      expect(await tallyOf(runnable, 'a')).toEqual({ documentId: 'a', events: 2 });
      expect(await runnable.live.checkpoint()).toBe(events[1]!.position);

      const discarded = await runnable.openShadow();
      const later = removal('a');
      await discarded.apply([...events, later], START, later.position);
      await discarded.discard();
      expect(await tallyOf(runnable, 'a')).toEqual({ documentId: 'a', events: 2 });
    });
  });
};

import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../infra/eventstore/memoryEventStore.js';
import { apiKeyDecider, type ApiKeyCommand } from '../../commands/access/createApiKey.js';
import { newEvent } from '../../test/support/events.js';
import { unitContext } from '../../test/support/givenWhenThen.js';
import { ConcurrencyError, IllegalStateError, ValidationError } from '../errors.js';
import { MAX_APPEND_BYTES, type EventStore, type ExpectedRevision } from '../ports/eventStore.js';
import { handleCommand, runCommand, unread, type RunOptions } from './commands.js';
import { loadAggregateAsOf } from './asOf.js';

const keyId = '00000000-0000-4000-8000-0000000000e1';
const stream = `apikey-${keyId}`;
const create: ApiKeyCommand = {
  kind: 'create',
  keyId,
  hash: 'e'.repeat(64),
  scopes: ['admin'],
  tenant: 'acme',
  label: null,
};
const revoke: ApiKeyCommand = { kind: 'revoke', keyId };

describe('the command handler, on the in-memory event store', () => {
  it('appends what the decider decides, with the metadata of the command', async () => {
    const store = createMemoryEventStore();
    const context = unitContext({ project: 'acme' });
    const result = await handleCommand(store, stream, apiKeyDecider, create, context);
    expect(result).toMatchObject({ revision: 0n, state: { exists: true, revoked: false } });
    const [event] = await store.readStream(stream);
    expect(event).toMatchObject({
      type: 'ApiKeyCreated',
      metadata: {
        commandId: context.commandId,
        project: 'acme',
        occurredAt: context.now,
        actor: context.actor,
      },
    });
  });

  it('appends nothing when the decider decides nothing, and answers the state as loaded', async () => {
    const store = createMemoryEventStore();
    await handleCommand(store, stream, apiKeyDecider, create, unitContext());
    await handleCommand(store, stream, apiKeyDecider, revoke, unitContext());
    const again = await handleCommand(store, stream, apiKeyDecider, revoke, unitContext());
    expect(again).toMatchObject({ events: [], revision: 1n, position: null, state: { revoked: true } });
    expect(await store.readStream(stream)).toHaveLength(2);
  });

  it('writes a retried command once: the same command id appends the same event ids', async () => {
    const store = createMemoryEventStore();
    const context = unitContext();
    await handleCommand(store, stream, apiKeyDecider, create, context);
    // The retry decides on state from before its first attempt, as a caller that never heard back would.
    const retried = await runCommand(
      store,
      stream,
      () => Promise.resolve({ state: apiKeyDecider.initialState(), revision: null }),
      (state) => ({ events: apiKeyDecider.decide(create, state, context), result: null }),
      context,
    );
    expect(retried.appended?.nextExpectedRevision).toBe(0n);
    expect(await store.readStream(stream)).toHaveLength(1);
  });

  it('refuses what the decider refuses, appending nothing', async () => {
    const store = createMemoryEventStore();
    await expect(handleCommand(store, stream, apiKeyDecider, revoke, unitContext())).rejects.toThrow(
      IllegalStateError,
    );
    expect(await store.readStream(stream)).toEqual([]);
  });

  it('refuses an event the catalog does not accept, appending nothing', async () => {
    const store = createMemoryEventStore();
    const bad = { ...create, keyId: 'not-a-uuid' };
    await expect(handleCommand(store, stream, apiKeyDecider, bad, unitContext())).rejects.toThrow(
      ValidationError,
    );
    expect(await store.readStream(stream)).toEqual([]);
  });

  /** Another writer appends to the stream after each load, the first `times` times. */
  const racing = (store: ReturnType<typeof createMemoryEventStore>, times: number) => {
    let loads = 0;
    return async () => {
      const loaded = await loadAggregateAsOf(store, stream, apiKeyDecider);
      if (loads++ < times)
        await store.append(
          stream,
          [newEvent({ type: 'ApiKeyRevoked', schemaVersion: 1, data: { keyId } })],
          'any',
        );
      return loaded;
    };
  };
  const decideRevoke = (state: ReturnType<typeof apiKeyDecider.initialState>) => ({
    events: apiKeyDecider.decide(revoke, state, unitContext()),
    result: null,
  });

  it('answers a conflict with a concurrent writer as a ConcurrencyError, without retries', async () => {
    const store = createMemoryEventStore();
    await handleCommand(store, stream, apiKeyDecider, create, unitContext());
    await expect(runCommand(store, stream, racing(store, 1), decideRevoke, unitContext())).rejects.toThrow(
      ConcurrencyError,
    );
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['ApiKeyCreated', 'ApiKeyRevoked']);
  });

  it('decides again on fresh state after a conflict, when retries are allowed', async () => {
    const store = createMemoryEventStore();
    await handleCommand(store, stream, apiKeyDecider, create, unitContext());
    const decided = await runCommand(store, stream, racing(store, 1), decideRevoke, unitContext(), {
      retries: 1,
    });
    // Fresh state: the key is already revoked, so the second decision appends nothing.
    expect(decided.appended).toBeNull();
    expect(await store.readStream(stream)).toHaveLength(2);
  });

  const revoked = { type: 'ApiKeyRevoked' as const, schemaVersion: 1 as const, data: { keyId } };

  it('records events no decision depends on whatever the revision, each with its command', async () => {
    const store = createMemoryEventStore();
    const [a, b, c] = [unitContext(), unitContext(), unitContext()];
    const record = (contexts: typeof a[]) =>
      runCommand(
        store,
        stream,
        unread(undefined),
        () => ({ events: contexts.map(() => revoked), contexts, result: null }),
        contexts[0]!,
        { expected: 'any' },
      );
    await record([a]);
    await record([b, c]);
    expect((await store.readStream(stream)).map((e) => e.metadata.commandId)).toEqual([
      a.commandId,
      b.commandId,
      c.commandId,
    ]);
    expect((await record([])).appended).toBeNull();
  });

  it('starts a stream once: another start is a conflict, the same command again is answered from the first', async () => {
    const store = createMemoryEventStore();
    const start = (context: ReturnType<typeof unitContext>) =>
      runCommand(
        store,
        stream,
        unread(apiKeyDecider.initialState()),
        (state) => ({ events: apiKeyDecider.decide(create, state, context), result: null }),
        context,
      );
    const context = unitContext();
    const first = await start(context);
    expect((await start(context)).appended).toEqual(first.appended);
    await expect(start(unitContext())).rejects.toThrow(ConcurrencyError);
    expect(await store.readStream(stream)).toHaveLength(1);
  });

  it('lands a batched decision too large for one append in several, each expecting the revision the last one left', async () => {
    const memory = createMemoryEventStore();
    const appends: { count: number; bytes: number; expected: ExpectedRevision }[] = [];
    const store: EventStore = {
      ...memory,
      append: (streamId, events, expected) => {
        appends.push({ count: events.length, bytes: Buffer.byteLength(JSON.stringify(events)), expected });
        return memory.append(streamId, events, expected);
      },
    };
    // Ten events of a fifth of the limit each: about two appends' worth.
    const label = 'x'.repeat(MAX_APPEND_BYTES / 5);
    const events = Array.from({ length: 10 }, (_, i) => ({
      ...revoked,
      type: 'ApiKeyCreated' as const,
      data: { ...create, label: `${i}${label}` },
    }));
    const context = unitContext();
    const start = () =>
      runCommand(store, stream, unread(undefined), () => ({ events, result: null }), context, { batched: true });
    const decided = await start();
    expect(decided.appended?.nextExpectedRevision).toBe(9n);
    expect(appends.length).toBeGreaterThan(1);
    expect(appends.every(({ bytes }) => bytes < MAX_APPEND_BYTES)).toBe(true);
    const chain = appends.map((_, i) => appends.slice(0, i).reduce((sum, { count }) => sum + count, 0));
    expect(appends.map(({ expected }) => expected)).toEqual(
      chain.map((before) => (before === 0 ? 'no_stream' : BigInt(before - 1))),
    );
    const stored = await memory.readStream(stream);
    expect(stored.map((e) => (e.data as { label: string }).label[0])).toEqual(events.map((_, i) => String(i)));
    // Retried whole, every part is answered from the first time.
    expect((await start()).appended).toEqual(decided.appended);
    expect(await memory.readStream(stream)).toHaveLength(10);
    // Never retried on a conflict: deciding again after a later part's conflict would store the earlier parts twice.
    // @ts-expect-error a batched decision takes no retries
    const retried: RunOptions = { batched: true, retries: 1 };
    expect(retried.batched).toBe(true);
  });
});

import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connectEsdb, createEsdbEventStore } from '../../infra/eventstore/esdbEventStore.js';
import { START } from '../../src/domain/position.js';
import { newEvents } from '../support/events.js';
import { describeEventStoreContract } from './eventStore.contract.js';
import { esdbStandIn } from './esdbStandIn.js';

/** Pinned: the contract is known to hold on this release. */
const ESDB_IMAGE = 'eventstore/eventstore:24.10';

/** `ESDB_URL`, or a throwaway server in a container where a Docker engine runs, or nothing. */
const reachableEsdb = async (): Promise<{ url: string; stop(): Promise<void> } | { skipped: string }> => {
  if (process.env.ESDB_URL) return { url: process.env.ESDB_URL, stop: () => Promise.resolve() };
  let container: StartedTestContainer;
  try {
    container = await new GenericContainer(ESDB_IMAGE)
      .withEnvironment({
        EVENTSTORE_INSECURE: 'true',
        EVENTSTORE_MEM_DB: 'true',
        EVENTSTORE_RUN_PROJECTIONS: 'None',
      })
      .withExposedPorts(2113)
      .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
      .withStartupTimeout(120_000)
      .start();
  } catch (error) {
    return {
      skipped: `ESDB_URL is not set and no container could start (${(error as Error).message.split('\n')[0]})`,
    };
  }
  return {
    url: `kurrentdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`,
    stop: async () => {
      await container.stop();
    },
  };
};

// The adapter's own logic (paging, exclusive positions, retries by event id, batching and
// resubscribing) against a stand-in for the client; it says nothing about the real server.
describeEventStoreContract(
  'eventstoredb adapter on an in-memory stand-in for the client',
  () =>
    Promise.resolve({
      store: createEsdbEventStore(esdbStandIn().client, { retryDelayMs: 50 }),
      cleanup: () => Promise.resolve(),
    }),
  { concurrentRaces: true },
);

describe('eventstoredb subscription on the stand-in', () => {
  it('delivers a failed batch again after resubscribing, and nothing twice once handled', async () => {
    const store = createEsdbEventStore(esdbStandIn().client, { retryDelayMs: 20 });
    const project = `p-${randomUUID()}`;
    await store.append(`job-${randomUUID()}`, newEvents(3, { project }), 'no_stream');
    const received: string[] = [];
    const errors: unknown[] = [];
    let failures = 1;
    const subscription = store.subscribe(
      async (events) => {
        await Promise.resolve();
        if (failures-- > 0) throw new Error('projection failed');
        received.push(...events.map((e) => e.metadata.eventId));
      },
      { from: START, filter: { project }, onError: (error) => errors.push(error) },
    );
    const later = newEvents(2, { project });
    await store.append(`job-${randomUUID()}`, later, 'no_stream');
    const deadline = Date.now() + 5_000;
    while (received.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await subscription.stop();
    expect(errors).toHaveLength(1);
    expect(received).toHaveLength(5);
    expect(new Set(received).size).toBe(5);
  });
});

const server = await reachableEsdb();

if ('url' in server) {
  console.log(`EventStore contract: eventstoredb ran against ${server.url}`);
  describeEventStoreContract(
    'eventstoredb',
    () => {
      const store = createEsdbEventStore(connectEsdb(server.url), { retryDelayMs: 100 });
      return Promise.resolve({
        store,
        cleanup: async () => {
          await store.close();
          await server.stop();
        },
      });
    },
    { concurrentRaces: true },
  );
} else {
  console.log(`skipped: no EventStoreDB reachable — ${server.skipped}`);
  describe.skip(`EventStore contract: eventstoredb (skipped: no EventStoreDB reachable)`, () => {
    it('needs ESDB_URL or a Docker engine');
  });
}

import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describe, it } from 'vitest';
import { connectEsdb, createEsdbEventStore } from '../../infra/eventstore/esdbEventStore.js';
import { describeEventStoreContract } from './eventStore.contract.js';

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
    url: `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`,
    stop: async () => {
      await container.stop();
    },
  };
};

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

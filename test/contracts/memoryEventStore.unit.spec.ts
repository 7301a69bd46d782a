import { createMemoryEventStore } from '../../infra/eventstore/memoryEventStore.js';
import { describeEventStoreContract } from './eventStore.contract.js';

describeEventStoreContract(
  'in memory',
  () => {
    const store = createMemoryEventStore();
    return Promise.resolve({ store, cleanup: () => store.close() });
  },
  { concurrentRaces: true },
);

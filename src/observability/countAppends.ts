import type { Counter } from 'prom-client';
import type { EventStore } from '../ports/eventStore.js';

/**
 * The store, counting what its appends accept by event type. A retried command's append is
 * answered from the first one and counted again: the counter tells appends, not distinct events.
 */
export const countAppends = (store: EventStore, appended: Counter<'type'>): EventStore => ({
  ...store,
  append: async (streamId, events, expected) => {
    const result = await store.append(streamId, events, expected);
    for (const event of events) appended.inc({ type: event.type });
    return result;
  },
});

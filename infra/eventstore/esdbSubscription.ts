import type {
  AllStreamResolvedEvent,
  AllStreamSubscription,
  KurrentDBClient,
} from '@kurrent/kurrentdb-client';
import type { StoredEvent } from '../../src/domain/events.js';
import { START, type Position } from '../../src/domain/position.js';
import type { SubscribeOptions, Subscription } from '../../src/ports/eventStore.js';
import { batchesOf } from './esdbBatches.js';
import { translateEsdbError } from './esdbErrors.js';
import {
  fromEsdbPosition,
  fromRecordedEvent,
  matchesFilter,
  serverFilter,
  toEsdbPosition,
} from './esdbMapping.js';

const DEFAULT_BATCH = 500;
const RETRY_DELAY_MS = 1_000;

/**
 * A catch-up subscription to `$all` behind the port's `subscribe`: filtered on the server, handed
 * over in batches one at a time, and resubscribed from the last handled position after a dropped
 * connection or a failed batch (which is then delivered again).
 */
export const subscribeToAll = (
  client: KurrentDBClient,
  handler: (events: StoredEvent[]) => Promise<void>,
  { from, filter, batchSize = DEFAULT_BATCH, onError }: SubscribeOptions,
  retryDelayMs = RETRY_DELAY_MS,
): Subscription => {
  let stopped = false;
  let current: AllStreamSubscription | undefined;
  let wake: () => void = () => undefined;
  let resumeFrom = from;
  /** Events converted but not yet handled: a checkpoint may only pass them once they are. */
  let unhandled = 0;

  const toStored = (resolved: AllStreamResolvedEvent): StoredEvent | null => {
    const recorded = resolved.event;
    if (!recorded || !matchesFilter(recorded, filter)) return null;
    const stored = fromRecordedEvent(recorded, recorded.position);
    // The server starts after `from`; a resubscription must not hand over an event twice either.
    if (stored.position <= resumeFrom) return null;
    unhandled += 1;
    return stored;
  };

  const loop = async () => {
    while (!stopped) {
      const subscription = client.subscribeToAll({
        fromPosition: resumeFrom === START ? 'start' : toEsdbPosition(resumeFrom),
        filter: serverFilter(filter, {
          // Events the server filtered out still move the checkpoint, but only once every event
          // before this checkpoint has been handled.
          checkpointReached: (sub, at) => {
            const checkpoint: Position = fromEsdbPosition(at);
            if (unhandled === 0 && sub.readableLength === 0 && checkpoint > resumeFrom)
              resumeFrom = checkpoint;
          },
        }),
      });
      current = subscription;
      try {
        for await (const batch of batchesOf(subscription, batchSize, toStored)) {
          if (stopped) break;
          await handler(batch);
          unhandled -= batch.length;
          resumeFrom = batch[batch.length - 1]!.position;
        }
      } catch (error) {
        if (!stopped) onError?.(translateEsdbError(error));
      } finally {
        unhandled = 0;
        await subscription.unsubscribe().catch(() => undefined);
      }
      if (!stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryDelayMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  };
  const running = loop();
  return {
    stop: async () => {
      stopped = true;
      wake();
      await current?.unsubscribe().catch(() => undefined);
      await running;
    },
  };
};

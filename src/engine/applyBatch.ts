import type { StoredEvent } from '../domain/events.js';
import type { Position } from '../domain/position.js';
import { CheckpointMovedError, UnprojectableEventError, type ProjectionSink } from '../ports/projections.js';

/** Told of each event a sink quarantined, with why it could not be applied. */
export type OnQuarantine = (event: StoredEvent, error: string) => void;

/**
 * Applies `events` and moves the checkpoint from `from` to `to`. When the sink meets an event it
 * can never apply, the batch is halved until that event stands alone: it is quarantined and the
 * events around it are applied. Any other error (a store out of reach) leaves the rest for a retry.
 */
const applyIsolating = async (
  sink: ProjectionSink,
  events: readonly StoredEvent[],
  from: Position,
  to: Position,
  onQuarantine: OnQuarantine,
): Promise<void> => {
  try {
    await sink.apply(events, from, to);
  } catch (error) {
    if (!(error instanceof UnprojectableEventError) || events.length === 0) throw error;
    if (events.length === 1) {
      await sink.quarantine(events[0]!, error.message, from, to);
      onQuarantine(events[0]!, error.message);
      return;
    }
    const middle = Math.floor(events.length / 2);
    const between = events[middle - 1]!.position;
    await applyIsolating(sink, events.slice(0, middle), from, between, onQuarantine);
    await applyIsolating(sink, events.slice(middle), between, to, onQuarantine);
  }
};

/**
 * Applies the events of a batch and moves the checkpoint to `to`, the batch's end, retrying what
 * is left when another runner moved the checkpoint first. Returns the new checkpoint.
 */
export const applyBatch = async (
  sink: ProjectionSink,
  events: readonly StoredEvent[],
  from: Position,
  to: Position,
  onQuarantine: OnQuarantine,
): Promise<Position> => {
  let checkpoint = from;
  let pending = events.filter((e) => e.position > checkpoint);
  while (checkpoint < to) {
    try {
      await applyIsolating(sink, pending, checkpoint, to, onQuarantine);
      return to;
    } catch (error) {
      if (!(error instanceof CheckpointMovedError)) throw error;
      checkpoint = await sink.checkpoint();
      pending = pending.filter((e) => e.position > checkpoint);
    }
  }
  return checkpoint;
};
